package telegram

import (
	"context"
	"fmt"

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

// SessionRows is where stored sessions live, one opaque blob per key
// (store.DB implements it).
type SessionRows interface {
	LoadMessengerSession(ctx context.Context, key string) ([]byte, error)
	SaveMessengerSession(ctx context.Context, key string, data []byte) error
}

// rowSessions adapts SessionRows to messenger.SessionStore.
type rowSessions struct{ rows SessionRows }

func (s rowSessions) LoadSession(ctx context.Context, key string) ([]byte, error) {
	return s.rows.LoadMessengerSession(ctx, key)
}

func (s rowSessions) SaveSession(ctx context.Context, key string, data []byte) error {
	return s.rows.SaveMessengerSession(ctx, key, data)
}

// StoredSessions keeps client sessions in rows, encrypted with authSecret
// (messenger.EncryptedStore): only ciphertext reaches the table. It fails
// when authSecret is unusable.
func StoredSessions(rows SessionRows, authSecret string) (*messenger.EncryptedStore, error) {
	s, err := messenger.NewEncryptedStore(rowSessions{rows}, authSecret)
	if err != nil {
		return nil, fmt.Errorf("stored sessions: %w", err)
	}
	return s, nil
}
