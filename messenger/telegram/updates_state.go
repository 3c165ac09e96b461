package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/gotd/td/telegram/updates"

	"github.com/hoard/hoard/messenger"
)

// updatesState persists the bot's updates state (pts, qts, date, seq, channel
// pts) and the access hashes it learned in the SessionStore, next to the
// session (key + "/updates"). After a restart the updates manager resumes
// with getDifference from the saved state, so messages sent while the bot
// was down are delivered, and replies and forwards work without waiting for
// a new update. It implements updates.StateStorage, ChannelAccessHasher and
// UserAccessHasher; every change is written through.
type updatesState struct {
	store messenger.SessionStore
	key   string

	mu   sync.Mutex
	data stateData
}

type stateData struct {
	UserID      int64           `json:"user_id"`
	HasState    bool            `json:"has_state"`
	State       updates.State   `json:"state"`
	ChannelPts  map[int64]int   `json:"channel_pts"`
	ChannelHash map[int64]int64 `json:"channel_hash"`
	UserHash    map[int64]int64 `json:"user_hash"`
}

func loadUpdatesState(ctx context.Context, store messenger.SessionStore, key string) (*updatesState, error) {
	s := &updatesState{store: store, key: key + "/updates"}
	blob, err := store.LoadSession(ctx, s.key)
	if err != nil {
		return nil, fmt.Errorf("load updates state: %w", err)
	}
	if blob != nil {
		if err := json.Unmarshal(blob, &s.data); err != nil {
			return nil, fmt.Errorf("load updates state: %w", err)
		}
	}
	s.init()
	return s, nil
}

func (s *updatesState) init() {
	if s.data.ChannelPts == nil {
		s.data.ChannelPts = map[int64]int{}
	}
	if s.data.ChannelHash == nil {
		s.data.ChannelHash = map[int64]int64{}
	}
	if s.data.UserHash == nil {
		s.data.UserHash = map[int64]int64{}
	}
}

// change applies f for userID (a new user starts from scratch) and saves.
func (s *updatesState) change(ctx context.Context, userID int64, f func(d *stateData)) error {
	s.mu.Lock()
	if s.data.UserID != userID {
		s.data = stateData{UserID: userID}
		s.init()
	}
	f(&s.data)
	blob, err := json.Marshal(s.data)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if err := s.store.SaveSession(ctx, s.key, blob); err != nil {
		return fmt.Errorf("save updates state: %w", err)
	}
	return nil
}

func (s *updatesState) read(userID int64, f func(d *stateData)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data.UserID == userID {
		f(&s.data)
	}
}

// GetState implements updates.StateStorage.
func (s *updatesState) GetState(_ context.Context, userID int64) (st updates.State, found bool, err error) {
	s.read(userID, func(d *stateData) { st, found = d.State, d.HasState })
	return st, found, nil
}

// SetState implements updates.StateStorage.
func (s *updatesState) SetState(ctx context.Context, userID int64, st updates.State) error {
	return s.change(ctx, userID, func(d *stateData) {
		d.State, d.HasState = st, true
		d.ChannelPts = map[int64]int{}
	})
}

// SetPts implements updates.StateStorage.
func (s *updatesState) SetPts(ctx context.Context, userID int64, pts int) error {
	return s.change(ctx, userID, func(d *stateData) { d.State.Pts = pts })
}

// SetQts implements updates.StateStorage.
func (s *updatesState) SetQts(ctx context.Context, userID int64, qts int) error {
	return s.change(ctx, userID, func(d *stateData) { d.State.Qts = qts })
}

// SetDate implements updates.StateStorage.
func (s *updatesState) SetDate(ctx context.Context, userID int64, date int) error {
	return s.change(ctx, userID, func(d *stateData) { d.State.Date = date })
}

// SetSeq implements updates.StateStorage.
func (s *updatesState) SetSeq(ctx context.Context, userID int64, seq int) error {
	return s.change(ctx, userID, func(d *stateData) { d.State.Seq = seq })
}

// SetDateSeq implements updates.StateStorage.
func (s *updatesState) SetDateSeq(ctx context.Context, userID int64, date, seq int) error {
	return s.change(ctx, userID, func(d *stateData) { d.State.Date, d.State.Seq = date, seq })
}

// GetChannelPts implements updates.StateStorage.
func (s *updatesState) GetChannelPts(_ context.Context, userID, channelID int64) (pts int, found bool, err error) {
	s.read(userID, func(d *stateData) { pts, found = d.ChannelPts[channelID] })
	return pts, found, nil
}

// SetChannelPts implements updates.StateStorage.
func (s *updatesState) SetChannelPts(ctx context.Context, userID, channelID int64, pts int) error {
	return s.change(ctx, userID, func(d *stateData) { d.ChannelPts[channelID] = pts })
}

// ForEachChannels implements updates.StateStorage.
func (s *updatesState) ForEachChannels(ctx context.Context, userID int64, f func(ctx context.Context, channelID int64, pts int) error) error {
	var chans map[int64]int
	s.read(userID, func(d *stateData) {
		chans = make(map[int64]int, len(d.ChannelPts))
		for k, v := range d.ChannelPts {
			chans[k] = v
		}
	})
	for id, pts := range chans {
		if err := f(ctx, id, pts); err != nil {
			return err
		}
	}
	return nil
}

// SetChannelAccessHash implements updates.ChannelAccessHasher.
func (s *updatesState) SetChannelAccessHash(ctx context.Context, userID, channelID, hash int64) error {
	return s.change(ctx, userID, func(d *stateData) { d.ChannelHash[channelID] = hash })
}

// GetChannelAccessHash implements updates.ChannelAccessHasher.
func (s *updatesState) GetChannelAccessHash(_ context.Context, userID, channelID int64) (hash int64, found bool, err error) {
	s.read(userID, func(d *stateData) { hash, found = d.ChannelHash[channelID] })
	return hash, found, nil
}

// SetUserAccessHash implements updates.UserAccessHasher.
func (s *updatesState) SetUserAccessHash(ctx context.Context, userID, targetID, hash int64) error {
	return s.change(ctx, userID, func(d *stateData) { d.UserHash[targetID] = hash })
}

// GetUserAccessHash implements updates.UserAccessHasher.
func (s *updatesState) GetUserAccessHash(_ context.Context, userID, targetID int64) (hash int64, found bool, err error) {
	s.read(userID, func(d *stateData) { hash, found = d.UserHash[targetID] })
	return hash, found, nil
}

var (
	_ updates.StateStorage        = (*updatesState)(nil)
	_ updates.ChannelAccessHasher = (*updatesState)(nil)
	_ updates.UserAccessHasher    = (*updatesState)(nil)
)
