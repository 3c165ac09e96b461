package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"

	"github.com/gotd/td/telegram/updates"
	"github.com/gotd/td/tg"

	"github.com/hoard/hoard/messenger"
)

// peerStore keeps the access hashes a client learned from updates (users
// and channels; they are per viewer), persisted in the SessionStore under
// StateKey+"/peers" so that every process of the same bot can address a
// user or read a channel that any of them has seen. A lookup that misses
// reloads the stored blob first. Writes happen only when a hash is new or
// changed, and merge with what is stored, so two processes do not erase
// each other's entries. It is safe for concurrent use and serves gotd's
// updates manager as its ChannelAccessHasher and UserAccessHasher.
type peerStore struct {
	store messenger.SessionStore
	key   string

	mu   sync.Mutex
	data peerData
}

type peerData struct {
	// UserID is the viewer the hashes belong to: a session signed in as
	// another user (a new bot token) starts from scratch.
	UserID   int64           `json:"user_id"`
	Users    map[int64]int64 `json:"users"`
	Channels map[int64]int64 `json:"channels"`
}

// loadPeers reads the stored hashes of viewer selfID.
func loadPeers(ctx context.Context, store messenger.SessionStore, key string, selfID int64) (*peerStore, error) {
	p := &peerStore{store: store, key: key + "/peers",
		data: peerData{UserID: selfID, Users: map[int64]int64{}, Channels: map[int64]int64{}}}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.reloadLocked(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// reloadLocked merges the stored blob into memory. Called with p.mu held.
func (p *peerStore) reloadLocked(ctx context.Context) error {
	blob, err := p.store.LoadSession(ctx, p.key)
	if err != nil {
		return fmt.Errorf("load peers: %w", err)
	}
	if blob == nil {
		return nil
	}
	var stored peerData
	if err := json.Unmarshal(blob, &stored); err != nil {
		return fmt.Errorf("load peers: %w", err)
	}
	if stored.UserID != p.data.UserID {
		return nil
	}
	maps.Copy(p.data.Users, stored.Users)
	maps.Copy(p.data.Channels, stored.Channels)
	return nil
}

// merge adds hashes of viewer selfID and saves them when any is new.
func (p *peerStore) merge(ctx context.Context, selfID int64, users, channels map[int64]int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if selfID != p.data.UserID || (!differs(p.data.Users, users) && !differs(p.data.Channels, channels)) {
		return nil
	}
	reloadErr := p.reloadLocked(ctx)
	maps.Copy(p.data.Users, users)
	maps.Copy(p.data.Channels, channels)
	if reloadErr != nil {
		return reloadErr // kept in memory; saving now could erase others' entries
	}
	blob, err := json.Marshal(p.data)
	if err != nil {
		return fmt.Errorf("save peers: %w", err)
	}
	if err := p.store.SaveSession(context.WithoutCancel(ctx), p.key, blob); err != nil {
		return fmt.Errorf("save peers: %w", err)
	}
	return nil
}

// differs reports whether add holds a key that have lacks or maps
// differently.
func differs(have, add map[int64]int64) bool {
	for k, v := range add {
		if old, ok := have[k]; !ok || old != v {
			return true
		}
	}
	return false
}

// learn records the hashes of the users and channels of an update (min
// entities carry no usable hash and are skipped).
func (p *peerStore) learn(ctx context.Context, users []tg.UserClass, chats []tg.ChatClass) error {
	var us, cs map[int64]int64
	for _, u := range users {
		if v, ok := u.(*tg.User); ok && !v.Min && !v.Self && v.AccessHash != 0 {
			if us == nil {
				us = map[int64]int64{}
			}
			us[v.ID] = v.AccessHash
		}
	}
	for _, c := range chats {
		var id, hash int64
		switch v := c.(type) {
		case *tg.Channel:
			if v.Min {
				continue
			}
			id, hash = v.ID, v.AccessHash
		case *tg.ChannelForbidden:
			id, hash = v.ID, v.AccessHash
		default:
			continue
		}
		if cs == nil {
			cs = map[int64]int64{}
		}
		cs[id] = hash
	}
	if us == nil && cs == nil {
		return nil
	}
	return p.merge(ctx, p.data.UserID, us, cs)
}

// lookup returns a hash from m (Users or Channels), reloading the stored
// blob on a miss: another process may have learned it.
func (p *peerStore) lookup(ctx context.Context, channel bool, id int64) (int64, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.data.Users
	if channel {
		m = p.data.Channels
	}
	if h, ok := m[id]; ok {
		return h, true, nil
	}
	if err := p.reloadLocked(ctx); err != nil {
		return 0, false, err
	}
	h, ok := m[id]
	return h, ok, nil
}

// GetChannelAccessHash implements updates.ChannelAccessHasher.
func (p *peerStore) GetChannelAccessHash(ctx context.Context, userID, channelID int64) (int64, bool, error) {
	if userID != p.data.UserID {
		return 0, false, nil
	}
	return p.lookup(ctx, true, channelID)
}

// SetChannelAccessHash implements updates.ChannelAccessHasher.
func (p *peerStore) SetChannelAccessHash(ctx context.Context, userID, channelID, hash int64) error {
	return p.merge(ctx, userID, nil, map[int64]int64{channelID: hash})
}

// GetUserAccessHash implements updates.UserAccessHasher.
func (p *peerStore) GetUserAccessHash(ctx context.Context, userID, targetID int64) (int64, bool, error) {
	if userID != p.data.UserID {
		return 0, false, nil
	}
	return p.lookup(ctx, false, targetID)
}

// SetUserAccessHash implements updates.UserAccessHasher.
func (p *peerStore) SetUserAccessHash(ctx context.Context, userID, targetID, hash int64) error {
	return p.merge(ctx, userID, map[int64]int64{targetID: hash}, nil)
}

var (
	_ updates.ChannelAccessHasher = (*peerStore)(nil)
	_ updates.UserAccessHasher    = (*peerStore)(nil)
)
