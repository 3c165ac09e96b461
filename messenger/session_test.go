package messenger

import (
	"bytes"
	"context"
	"testing"
)

func TestEncryptedStore(t *testing.T) {
	ctx := context.Background()
	inner := NewMemorySessionStore()
	s, err := NewEncryptedStore(inner, "secret-1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.LoadSession(ctx, "account:1"); err != nil || got != nil {
		t.Fatalf("empty load = %q, %v; want nil, nil", got, err)
	}
	plain := []byte(`{"auth_key":"very secret"}`)
	if err := s.SaveSession(ctx, "account:1", plain); err != nil {
		t.Fatal(err)
	}
	raw, _ := inner.LoadSession(ctx, "account:1")
	if bytes.Contains(raw, []byte("very secret")) {
		t.Fatal("session stored in clear text")
	}
	got, err := s.LoadSession(ctx, "account:1")
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("load = %q, %v", got, err)
	}
	// Fresh nonce per save.
	_ = s.SaveSession(ctx, "account:1", plain)
	raw2, _ := inner.LoadSession(ctx, "account:1")
	if bytes.Equal(raw, raw2) {
		t.Fatal("two saves produced the same ciphertext")
	}

	t.Run("other secret fails", func(t *testing.T) {
		other, _ := NewEncryptedStore(inner, "secret-2")
		if _, err := other.LoadSession(ctx, "account:1"); err == nil {
			t.Fatal("decrypted with the wrong secret")
		}
	})
	t.Run("blob bound to key", func(t *testing.T) {
		_ = inner.SaveSession(ctx, "bot", raw2)
		if _, err := s.LoadSession(ctx, "bot"); err == nil {
			t.Fatal("blob opened under another key")
		}
	})
	t.Run("tampered", func(t *testing.T) {
		bad := append([]byte(nil), raw2...)
		bad[len(bad)-1] ^= 1
		_ = inner.SaveSession(ctx, "t", bad)
		if _, err := s.LoadSession(ctx, "t"); err == nil {
			t.Fatal("tampered blob accepted")
		}
		_ = inner.SaveSession(ctx, "short", []byte{1, 2})
		if _, err := s.LoadSession(ctx, "short"); err == nil {
			t.Fatal("short blob accepted")
		}
	})
	t.Run("empty secret", func(t *testing.T) {
		if _, err := NewEncryptedStore(inner, ""); err == nil {
			t.Fatal("empty secret accepted")
		}
	})
}

func TestSealer(t *testing.T) {
	s, err := NewSealer("secret-1")
	if err != nil {
		t.Fatal(err)
	}
	blob, err := s.Seal("login-code:account:1", []byte("12345"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(blob, []byte("12345")) {
		t.Fatal("sealed in clear text")
	}
	if got, err := s.Open("login-code:account:1", blob); err != nil || string(got) != "12345" {
		t.Fatalf("open = %q, %v", got, err)
	}
	if _, err := s.Open("login-code:account:2", blob); err == nil {
		t.Fatal("blob opened under another label")
	}
	other, _ := NewSealer("secret-2")
	if _, err := other.Open("login-code:account:1", blob); err == nil {
		t.Fatal("blob opened with another secret")
	}
	if _, err := NewSealer(""); err == nil {
		t.Fatal("empty secret accepted")
	}
}
