// Package messengertest starts the emulator with a small seeded world and
// connects the gotd adapter to it, for tests of anything that talks to the
// messaging platform. Its own tests are the conformance suite of the port.
package messengertest

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/telegram"
)

var (
	keyOnce sync.Once
	key     *rsa.PrivateKey
	keyErr  error
)

// sharedKey returns one RSA key for every emulator of the test binary (RSA
// generation costs up to half a second).
func sharedKey(t testing.TB) *rsa.PrivateKey {
	keyOnce.Do(func() { key, keyErr = emulator.GenerateKey() })
	if keyErr != nil {
		t.Fatalf("emulator key: %v", keyErr)
	}
	return key
}

// Sizes of the seeded files.
const (
	ZipSize       = 300 << 10
	GeneratedSize = 3<<20 + 12345 // four 1 MiB chunks, the last one short
	GeneratedSeed = 42
)

// Seeded users who talk to the bot.
const (
	AlicePhone = "+15550000101"
	BobPhone   = "+15550000102"
)

// DefaultSeed is the seed used by Start: the example world with
// small files (written to dir).
func DefaultSeed(t testing.TB, dir string) string {
	return DefaultSeedWith(t, dir, nil)
}

// DefaultSeedWith is DefaultSeed changed by mutate (the seed's JSON
// object) before it is written.
func DefaultSeedWith(t testing.TB, dir string, mutate func(seed map[string]any)) string {
	t.Helper()
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	write := func(name string, size int) {
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if err := os.WriteFile(filepath.Join(files, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Mammoth Factory - 2024-01.zip", ZipSize)
	write("dragon.stl", 5000)
	write("general.pdf", 2048)
	if err := os.WriteFile(filepath.Join(files, "cover.jpg"), JPEG(t, 64, 48), 0o644); err != nil {
		t.Fatal(err)
	}
	seed := map[string]any{
		"account":     map[string]any{"phone": "+15550000001", "premium": false},
		"bot":         map[string]any{"username": "hoard_bot", "token": "111:demo"},
		"destination": map[string]any{"title": "Hoard Archive", "username": "hoardarchive"},
		"channels": []any{
			map[string]any{"title": "Mammoth Factory [Completed] 🦣", "username": "mammothfactory", "invite": "AbCd123",
				"joined": true, "protected": false, "forum": false, "category": "STL",
				"posts": []any{
					map[string]any{"file": "files/Mammoth Factory - 2024-01.zip", "caption": "January", "album": 7, "date": "2024-01-05T10:00:00Z"},
					map[string]any{"photo": "files/cover.jpg", "album": 7},
					map[string]any{"file": "files/Mammoth Factory - 2024-01.zip", "same_document_as": 0},
					map[string]any{"generate": map[string]any{"name": "Huge Pack.zip.001", "size": GeneratedSize, "seed": GeneratedSeed}},
					map[string]any{"text": "hello", "reply_to": 0},
				}},
			map[string]any{"title": "STL Emporium", "forum": true, "joined": true, "invite": "Forum42",
				"topics": []any{map[string]any{"title": "Dragons", "posts": []any{map[string]any{"file": "files/dragon.stl"},
					map[string]any{"text": "supports included?", "reply_to": 0}}}},
				"posts": []any{map[string]any{"file": "files/general.pdf"}}},
			map[string]any{"title": "Secret Vault", "invite": "Vault99", "joined": false, "protected": true,
				"posts": []any{map[string]any{"file": "files/general.pdf", "name": "vault.pdf"}}},
			map[string]any{"title": "Members Only", "invite": "Knock1", "join_request": true,
				"posts": []any{map[string]any{"text": "hi"}}},
			map[string]any{"title": "Open Shelf", "username": "openshelf", "joined": false,
				"posts": []any{map[string]any{"text": "welcome"}}},
		},
		"users": []any{
			map[string]any{"phone": AlicePhone, "username": "alice", "first_name": "Alice"},
			map[string]any{"phone": BobPhone, "username": "bob", "first_name": "Bob"},
		},
	}
	if mutate != nil {
		mutate(seed)
	}
	data, _ := json.MarshalIndent(seed, "", " ")
	path := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// JPEG returns a small valid JPEG image.
func JPEG(t testing.TB, w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 5), 90, 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Env is a running emulator plus what clients need to reach it.
type Env struct {
	Emu  *emulator.Emulator
	Info telegram.EmulatorInfo
	Dir  string
	// Logger discards below warning level unless HOARD_TEST_VERBOSE is set.
	Logger *slog.Logger
}

// Start runs an emulator on the seed file (DefaultSeed when empty) for the
// duration of the test.
func Start(t testing.TB, seedPath string) *Env {
	t.Helper()
	dir := t.TempDir()
	if seedPath == "" {
		seedPath = DefaultSeed(t, dir)
	}
	return StartIn(t, seedPath, dir)
}

// StartIn runs an emulator on seedPath with its state under dir/state, so a
// second StartIn on the same dir continues the same world.
func StartIn(t testing.TB, seedPath, dir string) *Env {
	t.Helper()
	seed, err := emulator.LoadSeed(seedPath)
	if err != nil {
		t.Fatal(err)
	}
	level := slog.LevelWarn
	if os.Getenv("HOARD_TEST_VERBOSE") != "" {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, cancel := context.WithCancel(context.Background())
	emu, err := emulator.Run(ctx, emulator.Options{Seed: seed, StateDir: filepath.Join(dir, "state"), Key: sharedKey(t), Logger: logger})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = emu.Close()
	})
	infoPath := filepath.Join(dir, "emulator.json")
	if err := emu.WriteInfo(infoPath); err != nil {
		t.Fatal(err)
	}
	info, err := telegram.LoadEmulatorInfo(infoPath)
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Emu: emu, Info: info, Dir: dir, Logger: logger}
}

// Config returns an adapter config for this emulator with a fresh in-memory
// session store.
func (e *Env) Config(key string) telegram.Config {
	return telegram.Config{
		Endpoint:   e.Info.Endpoint(),
		Sessions:   messenger.NewMemorySessionStore(),
		SessionKey: key,
		Logger:     e.Logger,
		Limiter:    messenger.NewLimiter(0, 1),
	}
}

// Account connects and signs in the seeded account.
func (e *Env) Account(t testing.TB, cfg telegram.Config) *telegram.Account {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	acc, err := telegram.NewAccount(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = acc.Close() })
	ok, err := acc.Authorized(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		if err := acc.SendCode(ctx, e.Info.Phone); err != nil {
			t.Fatal(err)
		}
		if err := acc.SignIn(ctx, e.Info.Code); err != nil {
			t.Fatal(err)
		}
	}
	return acc
}

// UserChat signs a seeded user in (a fresh session) and opens their chat
// with the bot.
func (e *Env) UserChat(t testing.TB, phone string) *telegram.UserChat {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := e.Config("user:" + phone)
	uc, err := telegram.NewUserChat(ctx, cfg, phone, e.Info.Code, e.Info.BotUsername)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = uc.Close() })
	return uc
}

// MemFile is an in-memory io.WriterAt for downloads in tests.
type MemFile struct {
	mu  sync.Mutex
	buf []byte
}

// WriteAt implements io.WriterAt.
func (m *MemFile) WriteAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if end := int(off) + len(p); end > len(m.buf) {
		m.buf = append(m.buf, make([]byte, end-len(m.buf))...)
	}
	copy(m.buf[off:], p)
	return len(p), nil
}

// Bytes returns the content.
func (m *MemFile) Bytes() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return bytes.Clone(m.buf)
}

var _ io.WriterAt = (*MemFile)(nil)

// Destination is the seeded account's destination channel with the bot
// made its administrator (and listening, so that it learned the channel):
// what the web's downloads read from.
type Destination struct {
	Account *telegram.Account
	Channel messenger.Channel
	Bot     *telegram.Bot
}

// DestinationWithBot signs the account in, makes the bot (connected with
// botCfg) an administrator of the destination and waits until the bot
// can read it.
func (e *Env) DestinationWithBot(t testing.TB, botCfg telegram.Config) *Destination {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	acc := e.Account(t, e.Config("account"))
	id := e.Emu.DestinationID()
	dest, err := acc.ChannelInfo(ctx, messenger.Channel{ID: id, AccessHash: e.Emu.AccountAccessHash(id)})
	if err != nil {
		t.Fatal(err)
	}
	bot, err := telegram.NewBot(ctx, botCfg, e.Info.BotToken)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bot.Close() })
	if err := acc.AddBotAdmin(ctx, dest, "@"+e.Info.BotUsername); err != nil {
		t.Fatal(err)
	}
	lctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = bot.Listen(lctx, ignoreUpdates{}) }()
	t.Cleanup(func() { stop(); <-done })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if ok, err := bot.CanRead(ctx, id); err == nil && ok {
			return &Destination{Account: acc, Channel: dest, Bot: bot}
		}
		if time.Now().After(deadline) {
			t.Fatal("the bot never learned the destination channel")
		}
	}
}

// Post uploads data to the destination as name and returns the post's id.
func (d *Destination) Post(t testing.TB, name string, data []byte) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	id, err := d.Account.Upload(ctx, messenger.UploadRequest{Channel: d.Channel, FileName: name,
		Data: io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data)))})
	if err != nil {
		t.Fatal(err)
	}
	return int64(id)
}

// ignoreUpdates is a bot handler that drops every update.
type ignoreUpdates struct{}

func (ignoreUpdates) HandleMessage(context.Context, messenger.IncomingMessage) error { return nil }
func (ignoreUpdates) HandleCallback(context.Context, messenger.CallbackQuery) error  { return nil }

// Published is what PostAll posted: the posts' ids in order, and the
// size and hex SHA-256 of the pieces joined.
type Published struct {
	IDs    []int64
	Size   int64
	SHA256 string
}

// PostAll posts the pieces of a file under names, in order.
func (d *Destination) PostAll(t testing.TB, names []string, pieces [][]byte) Published {
	t.Helper()
	h := sha256.New()
	var p Published
	for i, b := range pieces {
		h.Write(b)
		p.Size += int64(len(b))
		p.IDs = append(p.IDs, d.Post(t, names[i], b))
	}
	p.SHA256 = hex.EncodeToString(h.Sum(nil))
	return p
}

// Noise returns n pseudo-random bytes, the same for the same seed.
func Noise(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}
