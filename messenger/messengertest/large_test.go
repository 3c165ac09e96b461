//go:build large

package messengertest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
)

// TestLargeFileSplitTransfer moves a generated file above the 2 GB split
// threshold: download to disk (parallel, resumable), refusal of a one-piece
// upload beyond the part cap, then upload in split-sized byte ranges.
// Run with: go test -tags large -run TestLargeFileSplitTransfer -timeout 30m ./messenger/messengertest
func TestLargeFileSplitTransfer(t *testing.T) {
	const size = 2_200_000_000
	env := startWithGenerated(t, size, false)
	cfg := env.Config("account")
	cfg.Connections = 4
	acc := env.Account(t, cfg)
	ctx := t.Context()
	ch, err := acc.ResolveChannel(ctx, messenger.ChannelRef{Username: "bigfiles"})
	if err != nil {
		t.Fatal(err)
	}
	posts, err := acc.History(ctx, ch, messenger.HistoryQuery{})
	if err != nil || len(posts) != 1 || posts[0].Document.Size != size {
		t.Fatal(posts, err)
	}
	dest, err := acc.ResolveChannel(ctx, messenger.ChannelRef{Username: "hoardarchive"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "big.bin")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start := time.Now()
	if err := acc.Download(ctx, messenger.DownloadRequest{Channel: ch, MessageID: posts[0].ID, Document: *posts[0].Document, Threads: 8}, f); err != nil {
		t.Fatal(err)
	}
	t.Logf("download %d bytes: %s", size, time.Since(start))
	got, want := sha256.New(), sha256.New()
	if _, err := io.Copy(got, io.NewSectionReader(f, 0, size)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(want, emulator.GeneratedReader(7, size)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Fatal("downloaded bytes differ")
	}

	// One piece is over the non-Premium cap: refused client-side, and by the
	// platform (FILE_PARTS_INVALID) when the client claims Premium.
	whole := io.NewSectionReader(f, 0, size)
	if _, err := acc.Upload(ctx, messenger.UploadRequest{Channel: dest, Data: whole, FileName: "big.bin"}); !errors.Is(err, messenger.ErrTooLarge) {
		t.Fatalf("one-piece upload: %v", err)
	}
	if _, err := acc.Upload(ctx, messenger.UploadRequest{Channel: dest, Data: whole, FileName: "big.bin", Premium: true}); !errors.Is(err, messenger.ErrTooLarge) {
		t.Fatalf("one-piece upload claiming Premium: %v", err)
	}

	limit := messenger.MaxUploadSize(false) - messenger.UploadPartSize // one part of headroom
	var ids []int
	start = time.Now()
	for off, n := int64(0), 1; off < size; off, n = off+limit, n+1 {
		part := io.NewSectionReader(f, off, min(limit, size-off))
		id, err := acc.Upload(ctx, messenger.UploadRequest{Channel: dest, Data: part, FileName: "big.bin." + string(rune('0'+n)), Threads: 8})
		if err != nil {
			t.Fatalf("part %d: %v", n, err)
		}
		ids = append(ids, id)
	}
	t.Logf("upload in %d parts: %s", len(ids), time.Since(start))
	msgs, err := acc.Messages(ctx, dest, ids)
	if err != nil || len(msgs) != 2 {
		t.Fatal(msgs, err)
	}
	if total := msgs[0].Document.Size + msgs[1].Document.Size; total != size {
		t.Fatalf("parts hold %d bytes, want %d", total, size)
	}
}
