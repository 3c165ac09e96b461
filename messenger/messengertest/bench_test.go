package messengertest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
)

// startWithGenerated starts an emulator whose channel "bigfiles" holds one
// generated document of size bytes.
func startWithGenerated(t testing.TB, size int64, premium bool) *Env {
	dir := t.TempDir()
	seed := map[string]any{
		"account":     map[string]any{"phone": "+15550000001", "premium": premium},
		"destination": map[string]any{"title": "Hoard Archive", "username": "hoardarchive"},
		"channels": []any{map[string]any{"title": "Big Files", "username": "bigfiles", "joined": true,
			"posts": []any{map[string]any{"generate": map[string]any{"name": "big.bin", "size": size, "seed": 7}}}}},
	}
	data, _ := json.Marshal(seed)
	path := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return Start(t, path)
}

// preallocated is an io.WriterAt over a fixed buffer (no growth copies).
type preallocated []byte

func (p preallocated) WriteAt(b []byte, off int64) (int, error) { return copy(p[off:], b), nil }

// BenchmarkTransfer measures download and upload throughput of a 200 MiB
// file through the gotd adapter and the emulator on loopback (both in this
// process, so the figure is CPU-bound: AES-IGE and SHA-256 on both sides).
func BenchmarkTransfer(b *testing.B) {
	const size = 200 << 20
	env := startWithGenerated(b, size, false)
	cfg := env.Config("account")
	cfg.Connections = 4
	acc := env.Account(b, cfg)
	ctx := b.Context()
	ch, err := acc.ResolveChannel(ctx, messenger.ChannelRef{Username: "bigfiles"})
	if err != nil {
		b.Fatal(err)
	}
	posts, err := acc.History(ctx, ch, messenger.HistoryQuery{})
	if err != nil || len(posts) != 1 {
		b.Fatal(posts, err)
	}
	dest, err := acc.ResolveChannel(ctx, messenger.ChannelRef{Username: "hoardarchive"})
	if err != nil {
		b.Fatal(err)
	}
	buf := make(preallocated, size)

	b.Run("download", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			err := acc.Download(ctx, messenger.DownloadRequest{Channel: ch, MessageID: posts[0].ID, Document: *posts[0].Document, Threads: 8}, buf)
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("upload", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			_, err := acc.Upload(ctx, messenger.UploadRequest{Channel: dest, Data: emulator.GeneratedReader(7, size), FileName: "big.bin", Threads: 8})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
