package messenger

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
)

// SessionStore persists opaque session blobs, one per key (an account or the
// bot). LoadSession returns nil, nil when nothing is stored. The SQL
// implementation lives in store/.
type SessionStore interface {
	LoadSession(ctx context.Context, key string) ([]byte, error)
	SaveSession(ctx context.Context, key string, data []byte) error
}

// EncryptedStore wraps a SessionStore and encrypts sessions at rest with
// AES-256-GCM. The key is derived from AUTH_SECRET with HKDF-SHA-256; the
// session key is bound as additional data, so a blob copied to another key
// fails to open. It is safe for concurrent use if the inner store is.
type EncryptedStore struct {
	inner SessionStore
	aead  cipher.AEAD
}

const sessionKeyInfo = "hoard messenger session v1"

// NewEncryptedStore returns an EncryptedStore over inner. authSecret must not
// be empty.
func NewEncryptedStore(inner SessionStore, authSecret string) (*EncryptedStore, error) {
	if authSecret == "" {
		return nil, errors.New("session store: empty AUTH_SECRET")
	}
	key, err := hkdf.Key(sha256.New, []byte(authSecret), nil, sessionKeyInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("session store: derive key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("session store: cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("session store: gcm: %w", err)
	}
	return &EncryptedStore{inner: inner, aead: aead}, nil
}

// LoadSession decrypts the stored session; nil, nil when none is stored. A
// blob that fails authentication (other secret, tampering) is an error.
func (s *EncryptedStore) LoadSession(ctx context.Context, key string) ([]byte, error) {
	blob, err := s.inner.LoadSession(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("load session %q: %w", key, err)
	}
	if blob == nil {
		return nil, nil
	}
	n := s.aead.NonceSize()
	if len(blob) < n {
		return nil, fmt.Errorf("load session %q: blob too short", key)
	}
	data, err := s.aead.Open(nil, blob[:n], blob[n:], []byte(key))
	if err != nil {
		return nil, fmt.Errorf("load session %q: decrypt (AUTH_SECRET changed?): %w", key, err)
	}
	return data, nil
}

// SaveSession encrypts data with a fresh random nonce and stores it.
func (s *EncryptedStore) SaveSession(ctx context.Context, key string, data []byte) error {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(data)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return fmt.Errorf("save session %q: nonce: %w", key, err)
	}
	blob := s.aead.Seal(nonce, nonce, data, []byte(key))
	if err := s.inner.SaveSession(ctx, key, blob); err != nil {
		return fmt.Errorf("save session %q: %w", key, err)
	}
	return nil
}

// MemorySessionStore is an in-memory SessionStore for tools and tests.
type MemorySessionStore struct {
	mu   sync.Mutex
	data map[string][]byte
}

// NewMemorySessionStore returns an empty MemorySessionStore.
func NewMemorySessionStore() *MemorySessionStore {
	return &MemorySessionStore{data: map[string][]byte{}}
}

// LoadSession implements SessionStore.
func (m *MemorySessionStore) LoadSession(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v, ok := m.data[key]; ok {
		return append([]byte(nil), v...), nil
	}
	return nil, nil
}

// SaveSession implements SessionStore.
func (m *MemorySessionStore) SaveSession(_ context.Context, key string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.data[key] = append([]byte(nil), data...)
	return nil
}
