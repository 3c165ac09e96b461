package emulator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gotd/td/tg"
	"github.com/gotd/td/tgerr"
)

func testEmulator(t *testing.T, premium bool) *Emulator {
	t.Helper()
	dir := writeFiles(t)
	acc := `{"phone": "+15550000001"}`
	if premium {
		acc = `{"phone": "+15550000001", "premium": true}`
	}
	s, err := ParseSeed([]byte(`{"account": `+acc+`, "channels": [{"title": "A", "joined": true, "posts": [{"file": "files/a.zip"}]}]}`), dir)
	if err != nil {
		t.Fatal(err)
	}
	key, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Options{Seed: s, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func rpcType(err error) string {
	var rpc *tgerr.Error
	if errors.As(err, &rpc) {
		return rpc.Message
	}
	return ""
}

func TestUploadRules(t *testing.T) {
	e := testEmulator(t, false)
	c := &call{e: e, user: e.account, method: "upload.saveBigFilePart"}
	part := func(id int64, n, total, size int) string {
		_, _, err := uploadSavePart(c, &tg.UploadSaveBigFilePartRequest{FileID: id, FilePart: n, FileTotalParts: total, Bytes: make([]byte, size)})
		return rpcType(err)
	}
	if got := part(1, 0, 4001, partMax); got != "FILE_PARTS_INVALID" {
		t.Fatalf("4001 parts: %q", got)
	}
	if got := part(1, 0, 4000, partMax+1024); got != "FILE_PART_TOO_BIG" {
		t.Fatalf("oversized part: %q", got)
	}
	if got := part(1, 0, 4000, 1000); got != "FILE_PART_SIZE_INVALID" {
		t.Fatalf("odd part size: %q", got)
	}
	if got := part(1, 4000, 4000, partMax); got != "FILE_PART_INVALID" {
		t.Fatalf("part beyond total: %q", got)
	}
	if got := part(2, 0, 3, partMax); got != "" {
		t.Fatalf("valid part: %q", got)
	}
	if got := part(2, 1, 3, 256<<10); got != "FILE_PART_SIZE_CHANGED" {
		t.Fatalf("changed part size: %q", got)
	}
	if got := part(2, 2, 3, 100); got != "" { // short last part
		t.Fatalf("short last part: %q", got)
	}
	e.mu.Lock()
	_, _, _, err := c.takeUpload(&tg.InputFileBig{ID: 2, Parts: 3, Name: "x"})
	e.mu.Unlock()
	if got := rpcType(err); got != "FILE_PART_1_MISSING" {
		t.Fatalf("missing part: %q", got)
	}

	prem := testEmulator(t, true)
	pc := &call{e: prem, user: prem.account}
	if _, _, err := uploadSavePart(pc, &tg.UploadSaveBigFilePartRequest{FileID: 1, FilePart: 0, FileTotalParts: 8000, Bytes: make([]byte, partMax)}); err != nil {
		t.Fatalf("premium 8000 parts: %v", err)
	}
	if _, _, err := uploadSavePart(pc, &tg.UploadSaveBigFilePartRequest{FileID: 3, FilePart: 0, FileTotalParts: 8001, Bytes: make([]byte, partMax)}); rpcType(err) != "FILE_PARTS_INVALID" {
		t.Fatalf("premium 8001 parts: %v", err)
	}
}

func TestDownloadRules(t *testing.T) {
	e := testEmulator(t, false)
	c := &call{e: e, user: e.account}
	var d *document
	for _, doc := range e.docs {
		d = doc
	}
	loc := &tg.InputDocumentFileLocation{ID: d.id, AccessHash: e.accessHash(0, d.id), FileReference: e.fileReference("d", d.id, d.refVer)}
	get := func(off int64, limit int, precise bool) string {
		_, _, err := uploadGetFile(c, &tg.UploadGetFileRequest{Location: loc, Offset: off, Limit: limit, Precise: precise})
		return rpcType(err)
	}
	for _, tt := range []struct {
		off     int64
		limit   int
		precise bool
		want    string
	}{
		{0, 1 << 20, false, ""},
		{0, 2 << 20, false, "LIMIT_INVALID"},
		{4096, 12288, false, "LIMIT_INVALID"}, // 1 MiB % limit != 0
		{1024, 4096, false, "LIMIT_INVALID"},  // offset not 4 KiB aligned
		{1024, 3072, true, ""},
		{1<<20 - 4096, 8192, false, "LIMIT_INVALID"}, // crosses a 1 MiB boundary
		{-1, 4096, false, "OFFSET_INVALID"},
	} {
		if got := get(tt.off, tt.limit, tt.precise); got != tt.want {
			t.Errorf("offset %d limit %d precise %v: %q, want %q", tt.off, tt.limit, tt.precise, got, tt.want)
		}
	}
	e.ExpireFileReferences()
	if got := get(0, 4096, false); got != "FILE_REFERENCE_EXPIRED" {
		t.Fatalf("stale reference: %q", got)
	}
}

func TestSearch(t *testing.T) {
	e := testEmulator(t, false)
	c := &call{e: e, user: e.account}
	id := e.ChannelID("A")
	peer := &tg.InputPeerChannel{ChannelID: id, AccessHash: e.accessHash(e.account.id, id)}
	search := func(q string, filter tg.MessagesFilterClass) int {
		e.mu.Lock()
		defer e.mu.Unlock()
		res, _, err := messagesSearch(c, &tg.MessagesSearchRequest{Peer: peer, Q: q, Filter: filter, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return res.(*tg.MessagesChannelMessages).Count
	}
	if n := search("", &tg.InputMessagesFilterDocument{}); n != 1 {
		t.Fatalf("documents = %d", n)
	}
	if n := search("a.zip", &tg.InputMessagesFilterEmpty{}); n != 1 {
		t.Fatalf("by file name = %d", n)
	}
	if n := search("", &tg.InputMessagesFilterPhotos{}); n != 0 {
		t.Fatalf("photos = %d", n)
	}
	if n := search("nothing", &tg.InputMessagesFilterEmpty{}); n != 0 {
		t.Fatalf("no match = %d", n)
	}
}

func TestServe(t *testing.T) {
	dir := writeFiles(t)
	s, err := ParseSeed([]byte(`{"account": {"phone": "+15550000001"}}`), dir)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	info := filepath.Join(dir, "emulator.json")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, Options{Seed: s, StateDir: state}, info) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(info); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no info file")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The server key is kept in the state directory for the next start.
	if _, err := os.Stat(filepath.Join(state, "server-key.pem")); err != nil {
		t.Fatal(err)
	}
}
