package telegram

import (
	"context"

	"github.com/gotd/td/session"

	"github.com/hoard/hoard/messenger"
)

// sessionStorage adapts a messenger.SessionStore to gotd's session.Storage.
type sessionStorage struct {
	store messenger.SessionStore
	key   string
}

// LoadSession implements session.Storage.
func (s *sessionStorage) LoadSession(ctx context.Context) ([]byte, error) {
	data, err := s.store.LoadSession(ctx, s.key)
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, session.ErrNotFound
	}
	return data, nil
}

// StoreSession implements session.Storage.
func (s *sessionStorage) StoreSession(ctx context.Context, data []byte) error {
	return s.store.SaveSession(ctx, s.key, data)
}
