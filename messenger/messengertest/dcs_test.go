package messengertest

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hoard/hoard/messenger"
)

// farSeed adds a channel whose files live on every other DC (and a photo
// on DC 3) to the default world, written to dir; mutate changes the seed
// further.
func farSeed(t *testing.T, dir string, mutate func(seed map[string]any)) string {
	return DefaultSeedWith(t, dir, func(seed map[string]any) {
		var posts []any
		for _, dc := range []int{1, 3, 4, 5} {
			posts = append(posts, map[string]any{"generate": map[string]any{"name": "far" + string(rune('0'+dc)) + ".zip",
				"size": GeneratedSize, "seed": GeneratedSeed}, "dc": dc})
		}
		posts = append(posts, map[string]any{"photo": "files/cover.jpg", "dc": 3})
		seed["channels"] = append(seed["channels"].([]any), map[string]any{"title": "Far Away", "username": "faraway",
			"joined": true, "posts": posts})
		if mutate != nil {
			mutate(seed)
		}
	})
}

// TestFilesOnOtherDataCentres downloads files from the DCs that store them:
// straight there (their DCID), authorizing each DC once for the client's
// life, and following FILE_MIGRATE_X for a file whose DC was not known.
func TestFilesOnOtherDataCentres(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := Start(t, farSeed(t, dir, nil))
	acc := env.Account(t, env.Config("account"))
	ctx := ctxT(t)
	ch, err := acc.ResolveChannel(ctx, mustRef(t, "@faraway"))
	if err != nil {
		t.Fatal(err)
	}
	posts, err := acc.History(ctx, ch, messenger.HistoryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	want := generated(GeneratedSize)
	env.Emu.ResetCalls()
	download := func(t *testing.T, m messenger.Message, doc messenger.Document) {
		t.Helper()
		var got MemFile
		if err := acc.Download(ctx, messenger.DownloadRequest{Channel: ch, MessageID: m.ID, Document: doc, Threads: 1}, &got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("bytes of %s differ", doc.FileName)
		}
	}
	var dcs []int
	for _, m := range posts[:4] {
		dcs = append(dcs, m.Document.DCID)
		download(t, m, *m.Document)
		download(t, m, *m.Document) // the DC's connections are kept
	}
	if want := []int{1, 3, 4, 5}; !slices.Equal(dcs, want) {
		t.Fatalf("documents' DCs = %v, want %v", dcs, want)
	}
	photo := posts[4]
	if photo.Photo == nil || photo.Photo.DCID != 3 {
		t.Fatalf("photo = %+v, want one on DC 3", photo.Photo)
	}
	thumb, err := acc.DownloadThumbnail(ctx, ch, photo)
	if err != nil {
		t.Fatal(err)
	}
	cover, err := os.ReadFile(filepath.Join(dir, "files", "cover.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(thumb, cover) {
		t.Fatal("thumbnail bytes differ")
	}
	got := env.Emu.CallCounts()
	if got["auth.exportAuthorization"] != 4 || got["auth.importAuthorization"] != 4 {
		t.Fatalf("exports/imports = %d/%d, want one per other DC (4)", got["auth.exportAuthorization"], got["auth.importAuthorization"])
	}
	if n := env.Emu.Refusals()["upload.getFile:FILE_MIGRATE"]; n != 0 {
		t.Fatalf("%d FILE_MIGRATE answers for files whose DC was known", n)
	}

	t.Run("a file whose DC was not known follows FILE_MIGRATE", func(t *testing.T) {
		env.Emu.ResetCalls()
		m := posts[2]
		doc := *m.Document
		doc.DCID = 0 // as if it had moved: asked at home first
		download(t, m, doc)
		if n := env.Emu.Refusals()["upload.getFile:FILE_MIGRATE"]; n != 1 {
			t.Fatalf("%d FILE_MIGRATE answers, want 1 (then the file's DC)", n)
		}
	})
}

// TestAccountOnAnotherDataCentre signs in an account whose phone lives on
// DC 4 (the login migrates there), posts from it, and finds its session on
// DC 4 again after a reconnect.
func TestAccountOnAnotherDataCentre(t *testing.T) {
	t.Parallel()
	env := Start(t, farSeed(t, t.TempDir(), func(seed map[string]any) {
		seed["account"].(map[string]any)["dc"] = 4
	}))
	cfg := env.Config("account")
	acc := env.Account(t, cfg)
	ctx := ctxT(t)
	if n := env.Emu.Refusals()["auth.sendCode:PHONE_MIGRATE"]; n != 1 {
		t.Fatalf("PHONE_MIGRATE answers = %d, want 1", n)
	}
	dest := destination(t, env, acc)
	data := generated(GeneratedSize)
	id, err := acc.Upload(ctx, messenger.UploadRequest{Channel: dest, Data: io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data))),
		FileName: "home.zip"})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := acc.Messages(ctx, dest, []int{id})
	if err != nil || len(msgs) != 1 || msgs[0].Document == nil {
		t.Fatalf("posted message = %+v, %v", msgs, err)
	}
	if dc := msgs[0].Document.DCID; dc != 4 {
		t.Fatalf("uploaded file on DC %d, want the account's home DC 4", dc)
	}
	var got MemFile
	if err := acc.Download(ctx, messenger.DownloadRequest{Channel: dest, MessageID: id, Document: *msgs[0].Document}, &got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), data) {
		t.Fatal("downloaded bytes differ")
	}
	_ = acc.Close()

	again := env.Account(t, cfg) // the same session store
	if n := env.Emu.Refusals()["auth.sendCode:PHONE_MIGRATE"]; n != 1 {
		t.Fatalf("a reconnect signed in again (%d PHONE_MIGRATE answers)", n)
	}
	if _, err := again.Self(ctx); err != nil {
		t.Fatal(err)
	}
}
