package store_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func TestPreviewExtractionLifecycle(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	p := mustPackage(t, db)

	x, err := db.CreatePreviewExtraction(ctx, p.ID, "renders/cover.png", 0)
	must(t, err)
	if x.Status != hoard.ExtractionPending || x.EntryPath != "renders/cover.png" || x.FinishedAt != nil || x.RequestedBy != 0 {
		t.Fatalf("created %+v", x)
	}
	// One unfinished extraction per entry; another entry is fine.
	wantCode(t, savepoint(db, func(tx *store.DB) error {
		_, err := tx.CreatePreviewExtraction(ctx, p.ID, "renders/cover.png", 0)
		return err
	}), hoard.ECONFLICT)
	other, err := db.CreatePreviewExtraction(ctx, p.ID, "b.jpg", 0)
	must(t, err)
	wantCode(t, savepoint(db, func(tx *store.DB) error {
		_, err := tx.CreatePreviewExtraction(ctx, 1<<40, "a.jpg", 0)
		return err
	}), hoard.EINVALID)

	must(t, db.SetPreviewExtractionJob(ctx, x.ID, 77))
	got, err := db.FindUnfinishedPreviewExtraction(ctx, p.ID, "renders/cover.png")
	must(t, err)
	if got.ID != x.ID || got.RiverJobID != 77 {
		t.Fatalf("unfinished = %+v", got)
	}
	// Another package's id is not found through this package.
	q := mustPackage(t, db)
	_, err = db.FindPreviewExtraction(ctx, q.ID, x.ID)
	wantCode(t, err, hoard.ENOTFOUND)

	run, err := db.StartPreviewExtraction(ctx, x.ID)
	must(t, err)
	if run.Status != hoard.ExtractionRunning {
		t.Fatalf("started %+v", run)
	}
	must(t, db.NotePreviewExtraction(ctx, x.ID, "ranged", 2048, "Attempt 1 failed, retrying: boom"))
	_, err = db.FinishPreviewExtraction(ctx, x.ID, hoard.ExtractionRunning, "", 0, "")
	wantCode(t, err, hoard.EINVALID)
	ok, err := db.FinishPreviewExtraction(ctx, x.ID, hoard.ExtractionDone, "ranged", 4096, "")
	must(t, err)
	again, err2 := db.FinishPreviewExtraction(ctx, x.ID, hoard.ExtractionFailed, "ranged", 1, "late")
	must(t, err2)
	if !ok || again {
		t.Fatalf("finish = %v then %v, want true then false", ok, again)
	}
	done, err := db.FindPreviewExtraction(ctx, p.ID, x.ID)
	must(t, err)
	type finished struct {
		Status               hoard.ExtractionStatus
		Method, ErrorMessage string
		BytesDownloaded      int64
		Finished             bool
	}
	if diff := cmp.Diff(finished{hoard.ExtractionDone, "ranged", "", 4096, true},
		finished{done.Status, done.Method, done.ErrorMessage, done.BytesDownloaded, done.FinishedAt != nil}); diff != "" {
		t.Fatalf("done (-want +got):\n%s", diff)
	}
	_, err = db.StartPreviewExtraction(ctx, x.ID)
	wantCode(t, err, hoard.ENOTFOUND)
	// Finished, the entry may be extracted again.
	_, err = db.CreatePreviewExtraction(ctx, p.ID, "renders/cover.png", 0)
	must(t, err)
	latest, err := db.FindLatestPreviewExtraction(ctx, p.ID)
	must(t, err)
	if latest.ID == x.ID || latest.ID == other.ID {
		t.Fatalf("latest = %+v", latest)
	}
}

// TestPreviewExtractionOfLongPaths: entry paths of any length up to the
// column's 4,096 characters (multi-byte ones too) get an extraction, and
// the one-unfinished-per-entry rule still holds for them.
func TestPreviewExtractionOfLongPaths(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	p := mustPackage(t, db)
	// Scrambled characters: PostgreSQL compresses index entries, and a
	// repetitive path would fit where a real one does not.
	rng := rand.New(rand.NewPCG(1, 2))
	scrambled := func(n int, alphabet string) string {
		r := []rune(alphabet)
		var b strings.Builder
		for range n {
			b.WriteRune(r[rng.IntN(len(r))])
		}
		return b.String()
	}
	for _, path := range []string{
		scrambled(3000, "abcdefghijklmnopqrstuvwxyz0123456789/_-") + ".png",
		scrambled(4096-len(".png"), "äöüßéèêàçñøåæœ") + ".png", // multi-byte: over 8,000 bytes
	} {
		x, err := db.CreatePreviewExtraction(ctx, p.ID, path, 0)
		must(t, err)
		wantCode(t, savepoint(db, func(tx *store.DB) error {
			_, err := tx.CreatePreviewExtraction(ctx, p.ID, path, 0)
			return err
		}), hoard.ECONFLICT)
		got, err := db.FindUnfinishedPreviewExtraction(ctx, p.ID, path)
		must(t, err)
		if got.ID != x.ID || got.EntryPath != path {
			t.Fatalf("unfinished extraction of a %d-character path = %d, want %d", len(path), got.ID, x.ID)
		}
		_, err = db.FindUnfinishedPreviewExtraction(ctx, p.ID, path+"x")
		wantCode(t, err, hoard.ENOTFOUND)
	}
}

func TestListPackageImageFiles(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	p := mustPackage(t, db)
	must(t, db.ReplacePackageFiles(ctx, p.ID, []hoard.PackageFile{
		{Path: "model.stl", Size: 100}, {Path: "renders/Cover.JPG", Size: 5000}, {Path: "__MACOSX/renders/._Cover.JPG", Size: 100},
		{Path: "renders/._b.png", Size: 100}, {Path: "big.png", Size: 50 << 20}, {Path: "anim.gif", Size: 10}, {Path: "x.webp", Size: 20},
	}))
	files, err := db.ListPackageImageFiles(ctx, p.ID, 10<<20, 100)
	must(t, err)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	if want := []string{"renders/Cover.JPG", "anim.gif", "x.webp"}; !slices.Equal(paths, want) {
		t.Fatalf("images = %q, want %q", paths, want)
	}
	f, err := db.FindPackageFileByPath(ctx, p.ID, "renders/Cover.JPG")
	must(t, err)
	if f.Size != 5000 || f.Extension != "jpg" {
		t.Fatalf("file = %+v", f)
	}
	_, err = db.FindPackageFileByPath(ctx, p.ID, "renders/cover.jpg")
	wantCode(t, err, hoard.ENOTFOUND)
}
