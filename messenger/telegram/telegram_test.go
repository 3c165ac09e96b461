package telegram

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gotd/td/session"
	"github.com/gotd/td/tgerr"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
)

func TestMapErr(t *testing.T) {
	tests := []struct {
		rpc  *tgerr.Error
		want error
		code string
	}{
		{tgerr.New(400, "CHANNEL_PRIVATE"), messenger.ErrAccessLost, hoard.EFORBIDDEN},
		{tgerr.New(400, "CHANNEL_INVALID"), messenger.ErrAccessLost, hoard.EFORBIDDEN},
		{tgerr.New(400, "CHAT_FORBIDDEN"), messenger.ErrAccessLost, hoard.EFORBIDDEN},
		{tgerr.New(400, "USERNAME_NOT_OCCUPIED"), messenger.ErrNotFound, hoard.ENOTFOUND},
		{tgerr.New(401, "AUTH_KEY_UNREGISTERED"), messenger.ErrUnauthorized, hoard.EUNAUTHORIZED},
		{tgerr.New(401, "SESSION_REVOKED"), messenger.ErrUnauthorized, hoard.EUNAUTHORIZED},
		{tgerr.New(401, "SESSION_PASSWORD_NEEDED"), messenger.ErrPasswordNeeded, hoard.EUNAUTHORIZED},
		{tgerr.New(400, "PHONE_CODE_INVALID"), messenger.ErrInvalidCode, hoard.EINVALID},
		{tgerr.New(400, "CHAT_FORWARDS_RESTRICTED"), messenger.ErrProtected, hoard.EFORBIDDEN},
		{tgerr.New(400, "FILE_PARTS_INVALID"), messenger.ErrTooLarge, hoard.ETOOLARGE},
		{tgerr.New(500, "INTERNAL"), nil, hoard.EINTERNAL},
	}
	for _, tt := range tests {
		err := mapErr("op", fmt.Errorf("call: %w", tt.rpc))
		if tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%s: %v does not match %v", tt.rpc.Type, err, tt.want)
		}
		if !tgerr.Is(err, tt.rpc.Type) {
			t.Errorf("%s: cause lost: %v", tt.rpc.Type, err)
		}
		if got := hoard.ErrorCode(err); got != tt.code {
			t.Errorf("%s: code %q, want %q", tt.rpc.Type, got, tt.code)
		}
	}
	fw := mapErr("op", &messenger.FloodWait{RetryAfter: time.Minute})
	if !errors.Is(fw, messenger.ErrRateLimited) {
		t.Fatal("flood wait lost")
	}
	if mapErr("op", nil) != nil {
		t.Fatal("nil error mapped")
	}
	if err := mapErr("op", context.Canceled); !errors.Is(err, context.Canceled) {
		t.Fatal("context error lost")
	}
}

func TestConfig(t *testing.T) {
	store := messenger.NewMemorySessionStore()
	if err := (&Config{}).setDefaults(); err == nil {
		t.Fatal("config without sessions accepted")
	}
	if err := (&Config{Sessions: store, SessionKey: "a"}).setDefaults(); err == nil {
		t.Fatal("production config without app credentials accepted")
	}
	prod := Config{Sessions: store, SessionKey: "a", AppID: 1, AppHash: "h"}
	if err := prod.setDefaults(); err != nil {
		t.Fatal(err)
	}
	opts, err := prod.options()
	if err != nil || opts.DCList.Options != nil || opts.PublicKeys != nil || opts.Resolver != nil {
		t.Fatalf("production options must be gotd's defaults: %+v, %v", opts, err)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "emulator.json")
	if _, err := LoadEmulatorInfo(path); err == nil {
		t.Fatal("missing info file accepted")
	}
	_ = os.WriteFile(path, []byte(`{"addr": "127.0.0.1:1234"}`), 0o600)
	if _, err := LoadEmulatorInfo(path); err == nil {
		t.Fatal("info without keys accepted")
	}
	_ = os.WriteFile(path, []byte(`{"addr": "127.0.0.1:1234", "dc": 2, "public_keys": ["garbage"], "phone": "+1", "code": "1", "bot_token": "1:x"}`), 0o600)
	info, err := LoadEmulatorInfo(path)
	if err != nil || info.BotToken != "1:x" {
		t.Fatal(info, err)
	}
	emu := Config{Sessions: store, SessionKey: "a", Endpoint: info.Endpoint()}
	if err := emu.setDefaults(); err != nil {
		t.Fatal(err)
	}
	if _, err := emu.options(); err == nil {
		t.Fatal("bad PEM accepted")
	}
}

func TestSessionStorage(t *testing.T) {
	ctx := context.Background()
	s := &sessionStorage{store: messenger.NewMemorySessionStore(), key: "bot"}
	if _, err := s.LoadSession(ctx); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("empty store: %v, want session.ErrNotFound", err)
	}
	if err := s.StoreSession(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LoadSession(ctx); err != nil || string(got) != "x" {
		t.Fatal(got, err)
	}
}
