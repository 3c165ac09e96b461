package emulator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
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
	return seededEmulator(t, `{"account": `+acc+`, "channels": [{"title": "A", "joined": true, "posts": [{"file": "files/a.zip"}]}]}`, dir)
}

// seededEmulator builds (without starting) an emulator of a seed given as
// JSON, its files relative to dir; Close runs at the test's end.
func seededEmulator(t *testing.T, seed, dir string) *Emulator {
	t.Helper()
	s, err := ParseSeed([]byte(seed), dir)
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
	c := &call{e: e, dc: EntryDC, user: e.account, method: "upload.saveBigFilePart"}
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
	pc := &call{e: prem, dc: EntryDC, user: prem.account}
	if _, _, err := uploadSavePart(pc, &tg.UploadSaveBigFilePartRequest{FileID: 1, FilePart: 0, FileTotalParts: 8000, Bytes: make([]byte, partMax)}); err != nil {
		t.Fatalf("premium 8000 parts: %v", err)
	}
	if _, _, err := uploadSavePart(pc, &tg.UploadSaveBigFilePartRequest{FileID: 3, FilePart: 0, FileTotalParts: 8001, Bytes: make([]byte, partMax)}); rpcType(err) != "FILE_PARTS_INVALID" {
		t.Fatalf("premium 8001 parts: %v", err)
	}
}

func TestDownloadRules(t *testing.T) {
	e := testEmulator(t, false)
	c := &call{e: e, dc: EntryDC, user: e.account}
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
	c := &call{e: e, dc: EntryDC, user: e.account}
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

func TestDataCentreRules(t *testing.T) {
	e := seededEmulator(t, `{"account": {"phone": "+15550000001"}, "users": [{"phone": "+15550000002", "dc": 4}],
		"channels": [{"title": "A", "joined": true, "posts": [
			{"file": "files/a.zip"}, {"generate": {"name": "far.zip", "size": 4096, "seed": 1}, "dc": 4},
			{"photo": "files/cover.jpg", "dc": 5}]}]}`, writeFiles(t))
	var near, far *document
	for _, d := range e.docs {
		if d.name == "far.zip" {
			far = d
		} else {
			near = d
		}
	}
	var ph *photo
	for _, p := range e.photos {
		ph = p
	}
	docLoc := func(d *document) tg.InputFileLocationClass {
		return &tg.InputDocumentFileLocation{ID: d.id, AccessHash: e.accessHash(0, d.id), FileReference: e.fileReference("d", d.id, d.refVer)}
	}
	photoLoc := &tg.InputPhotoFileLocation{ID: ph.id, AccessHash: e.accessHash(0, ph.id), FileReference: e.fileReference("p", ph.id, ph.refVer), ThumbSize: "x"}
	for _, tt := range []struct {
		name string
		dc   int
		loc  tg.InputFileLocationClass
		want string
	}{
		{"a file on the entry DC, asked there", EntryDC, docLoc(near), ""},
		{"a file on the entry DC, asked on DC 4", 4, docLoc(near), "FILE_MIGRATE_2"},
		{"a file on DC 4, asked on the entry DC", EntryDC, docLoc(far), "FILE_MIGRATE_4"},
		{"a file on DC 4, asked there", 4, docLoc(far), ""},
		{"a photo on DC 5, asked on the entry DC", EntryDC, photoLoc, "FILE_MIGRATE_5"},
		{"a photo on DC 5, asked there", 5, photoLoc, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &call{e: e, dc: tt.dc, user: e.account}
			_, _, err := uploadGetFile(c, &tg.UploadGetFileRequest{Location: tt.loc, Limit: 4096})
			if got := rpcType(err); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}

	for _, tt := range []struct {
		name, method string
		user         *user
		dc           int
		want         string
	}{
		{"history at home", "messages.getHistory", e.account, EntryDC, ""},
		{"history abroad", "messages.getHistory", e.account, 3, "USER_MIGRATE_2"},
		{"a file abroad", "upload.getFile", e.account, 3, ""},
		{"a user of DC 4 at home", "messages.sendMessage", e.phones["15550000002"], 4, ""},
		{"a user of DC 4 on the entry DC", "messages.sendMessage", e.phones["15550000002"], EntryDC, "USER_MIGRATE_4"},
		{"before sign-in", "auth.sendCode", nil, 3, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := rpcType(onForeignDC(tt.method, tt.user, tt.dc)); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}

	t.Run("a login starts on the phone's DC", func(t *testing.T) {
		e.mu.Lock()
		defer e.mu.Unlock()
		c := &call{e: e, dc: EntryDC}
		_, _, err := authSendCode(c, &tg.AuthSendCodeRequest{PhoneNumber: "+15550000002"})
		if got := rpcType(err); got != "PHONE_MIGRATE_4" {
			t.Fatalf("send code on the entry DC: %q", got)
		}
		c.dc = 4
		if _, _, err := authSendCode(c, &tg.AuthSendCodeRequest{PhoneNumber: "+15550000002"}); err != nil {
			t.Fatalf("send code on DC 4: %v", err)
		}
	})

	t.Run("an authorization moves to another DC once, through its token", func(t *testing.T) {
		e.mu.Lock()
		defer e.mu.Unlock()
		home := &call{e: e, dc: EntryDC, user: e.account}
		res, _, err := authExportAuthorization(home, &tg.AuthExportAuthorizationRequest{DCID: 4})
		if err != nil {
			t.Fatal(err)
		}
		ex := res.(*tg.AuthExportedAuthorization)
		other := &call{e: e, dc: 3}
		if _, _, err := authImportAuthorization(other, &tg.AuthImportAuthorizationRequest{ID: ex.ID, Bytes: ex.Bytes}); rpcType(err) != "AUTH_BYTES_INVALID" {
			t.Fatalf("import on the wrong DC: %v", err)
		}
		far := &call{e: e, dc: 4}
		far.session.AuthKey.ID = [8]byte{4}
		if _, _, err := authImportAuthorization(far, &tg.AuthImportAuthorizationRequest{ID: ex.ID, Bytes: ex.Bytes}); err != nil {
			t.Fatalf("import on DC 4: %v", err)
		}
		if e.auth[[8]byte{4}] != e.account.id {
			t.Fatal("the key of DC 4 is not the account's after the import")
		}
		if _, _, err := authImportAuthorization(far, &tg.AuthImportAuthorizationRequest{ID: ex.ID, Bytes: ex.Bytes}); rpcType(err) != "AUTH_BYTES_INVALID" {
			t.Fatalf("second import of one token: %v", err)
		}
		if _, _, err := authExportAuthorization(home, &tg.AuthExportAuthorizationRequest{DCID: EntryDC}); rpcType(err) != "DC_ID_INVALID" {
			t.Fatalf("export to the own DC: %v", err)
		}
	})
}

func TestExportFlood(t *testing.T) {
	e := testEmulator(t, false)
	e.exportFlood = ExportFlood{Budget: 3, Window: time.Minute}
	e.mu.Lock()
	defer e.mu.Unlock()
	c := &call{e: e, dc: EntryDC, user: e.account}
	var got []string
	for range 5 {
		_, _, err := authExportAuthorization(c, &tg.AuthExportAuthorizationRequest{DCID: 4})
		got = append(got, rpcType(err))
	}
	want := []string{"", "", "", "FLOOD_WAIT_60", "FLOOD_WAIT_60"}
	if !slices.Equal(got, want) {
		t.Fatalf("exports answered %q, want %q", got, want)
	}
}
