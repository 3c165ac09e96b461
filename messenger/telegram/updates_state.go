package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gotd/td/telegram/updates"

	"github.com/hoard/hoard/messenger"
)

// updatesState persists a client's update state (pts, qts, date, seq and
// channel pts) in the SessionStore under StateKey+"/updates". It is loaded
// when Bot.Listen starts, so a process that listens after another resumes
// from where that one stopped, with getDifference: updates that arrived
// while nobody listened are delivered, not lost. Only the listening process
// writes it. It implements updates.StateStorage; every change is written
// through, or, while Listen runs, behind (writeBehind).
type updatesState struct {
	store messenger.SessionStore
	key   string

	mu   sync.Mutex
	data stateData
	// kick, while writeBehind's writer runs, asks it to save.
	kick chan struct{}
}

type stateData struct {
	UserID     int64         `json:"user_id"`
	HasState   bool          `json:"has_state"`
	State      updates.State `json:"state"`
	ChannelPts map[int64]int `json:"channel_pts"`
	// Access hashes stored here by earlier versions; loadUpdatesState
	// moves them to the peers blob.
	ChannelHash map[int64]int64 `json:"channel_hash,omitempty"`
	UserHash    map[int64]int64 `json:"user_hash,omitempty"`
}

// loadUpdatesState reads the stored state; hashes of the older layout are
// handed to peers.
func loadUpdatesState(ctx context.Context, store messenger.SessionStore, key string, peers *peerStore) (*updatesState, error) {
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
	if len(s.data.UserHash) > 0 || len(s.data.ChannelHash) > 0 {
		if err := peers.merge(ctx, s.data.UserID, s.data.UserHash, s.data.ChannelHash); err != nil {
			return nil, err
		}
		s.data.UserHash, s.data.ChannelHash = nil, nil
	}
	if s.data.ChannelPts == nil {
		s.data.ChannelPts = map[int64]int{}
	}
	return s, nil
}

// change applies f for userID (another user starts from scratch) and saves,
// or, while a writer runs (writeBehind), has it save. The save outlives a
// cancelled ctx: a state not saved after its updates were handed out would
// hand them out again.
func (s *updatesState) change(ctx context.Context, userID int64, f func(d *stateData)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data.UserID != userID {
		s.data = stateData{UserID: userID, ChannelPts: map[int64]int{}}
	}
	f(&s.data)
	if s.kick != nil {
		select {
		case s.kick <- struct{}{}:
		default: // a save is due already: it takes this change too
		}
		return nil
	}
	blob, err := s.encodeLocked()
	if err != nil {
		return err
	}
	return s.write(ctx, blob)
}

// save writes the state as it is now, without holding s.mu while the
// database commits.
func (s *updatesState) save(ctx context.Context) error {
	s.mu.Lock()
	blob, err := s.encodeLocked()
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.write(ctx, blob)
}

// encodeLocked encodes the state; s.mu is held.
func (s *updatesState) encodeLocked() ([]byte, error) {
	blob, err := json.Marshal(s.data)
	if err != nil {
		return nil, fmt.Errorf("save updates state: %w", err)
	}
	return blob, nil
}

func (s *updatesState) write(ctx context.Context, blob []byte) error {
	if err := s.store.SaveSession(context.WithoutCancel(ctx), s.key, blob); err != nil {
		return fmt.Errorf("save updates state: %w", err)
	}
	return nil
}

// writeBehind has a goroutine save the state after changes, at most once
// per updatesStateEvery, so that the updates manager, which saves after
// every update it hands out, does not wait for a commit each time (a burst
// of commands queued behind one commit each), and a burst of updates costs
// one save. Until stop, a crash may lose the last changes: the next Listen
// then fetches those updates again, and every answer is claimed once
// (store.ClaimBotUpdate), so nothing is answered twice. stop ends the
// writer and saves the last state.
func (s *updatesState) writeBehind(ctx context.Context, log *slog.Logger) (stop func() error) {
	kick := make(chan struct{}, 1)
	quit := make(chan struct{})
	done := make(chan struct{})
	s.mu.Lock()
	s.kick = kick
	s.mu.Unlock()
	go func() {
		defer close(done)
		for range kick {
			if err := s.save(ctx); err != nil {
				log.Warn("telegram: bot: the update state was not saved; the next change saves it", "error", err)
			}
			select { // the changes meanwhile wait to be saved together
			case <-time.After(updatesStateEvery):
			case <-quit:
			}
		}
	}()
	return func() error {
		s.mu.Lock()
		s.kick = nil
		s.mu.Unlock()
		close(quit)
		close(kick)
		<-done
		return s.save(ctx)
	}
}

// updatesStateEvery is the least time between two saves of the bot's
// update state while it listens.
const updatesStateEvery = 200 * time.Millisecond

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

var _ updates.StateStorage = (*updatesState)(nil)
