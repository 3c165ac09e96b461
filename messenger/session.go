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
	"strconv"
	"sync"
)

// SessionStore persists opaque session blobs, one per key (an account or the
// bot). LoadSession returns nil, nil when nothing is stored. The SQL
// implementation lives in store/.
type SessionStore interface {
	LoadSession(ctx context.Context, key string) ([]byte, error)
	SaveSession(ctx context.Context, key string, data []byte) error
}

// Sealer encrypts small secrets at rest with AES-256-GCM under a key
// derived from AUTH_SECRET with HKDF-SHA-256. Every blob is bound to a label
// (additional data): a blob copied to another label fails to open. It is
// safe for concurrent use. EncryptedStore seals sessions with it; the login
// flow seals codes and passwords in flight with it.
type Sealer struct {
	aead cipher.AEAD
}

const sessionKeyInfo = "hoard messenger session v1"

// NewSealer derives the key from authSecret, which must not be empty.
func NewSealer(authSecret string) (*Sealer, error) {
	if authSecret == "" {
		return nil, errors.New("sealer: empty AUTH_SECRET")
	}
	key, err := hkdf.Key(sha256.New, []byte(authSecret), nil, sessionKeyInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("sealer: derive key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("sealer: cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("sealer: gcm: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts data for label with a fresh random nonce (nonce ‖
// ciphertext).
func (s *Sealer) Seal(label string, data []byte) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(data)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal %q: nonce: %w", label, err)
	}
	return s.aead.Seal(nonce, nonce, data, []byte(label)), nil
}

// Open decrypts a blob made by Seal for the same label. A blob that fails
// authentication (other secret, other label, tampering) is an error.
func (s *Sealer) Open(label string, blob []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(blob) < n {
		return nil, fmt.Errorf("open %q: blob too short", label)
	}
	data, err := s.aead.Open(nil, blob[:n], blob[n:], []byte(label))
	if err != nil {
		return nil, fmt.Errorf("open %q: decrypt (AUTH_SECRET changed?): %w", label, err)
	}
	return data, nil
}

// EncryptedStore wraps a SessionStore and encrypts sessions at rest with a
// Sealer; the session key is the label, so a blob copied to another key
// fails to open. It is safe for concurrent use if the inner store is.
type EncryptedStore struct {
	inner  SessionStore
	sealer *Sealer
}

// NewEncryptedStore returns an EncryptedStore over inner. authSecret must not
// be empty.
func NewEncryptedStore(inner SessionStore, authSecret string) (*EncryptedStore, error) {
	sealer, err := NewSealer(authSecret)
	if err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	return &EncryptedStore{inner: inner, sealer: sealer}, nil
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
	data, err := s.sealer.Open(key, blob)
	if err != nil {
		return nil, fmt.Errorf("load session: %w", err)
	}
	return data, nil
}

// SaveSession encrypts data with a fresh random nonce and stores it.
func (s *EncryptedStore) SaveSession(ctx context.Context, key string, data []byte) error {
	blob, err := s.sealer.Seal(key, data)
	if err != nil {
		return fmt.Errorf("save session: %w", err)
	}
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

// Login secrets an account's row holds sealed while a login is in flight;
// LoginLabel names each for Sealer, per account.
const (
	SecretCodeRequest = "code-request" // a LoginCode as JSON
	SecretCode        = "code"
	SecretPassword    = "password"
)

// LoginLabel is the Sealer label of one login secret of an account, so that
// a blob copied to another account or column fails to open.
func LoginLabel(accountID int64, secret string) string {
	return "login-" + secret + ":account:" + strconv.FormatInt(accountID, 10)
}
