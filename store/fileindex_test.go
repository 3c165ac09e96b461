package store_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
)

// TestFileIndexFindsWhatListPackageFilesLists: a file search through a
// package's FileIndex lists exactly the entries the search in the database
// lists, for every kind of text and page.
func TestFileIndexFindsWhatListPackageFilesLists(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	p := mustPackage(t, db)
	paths := []string{"Dragon/Body.STL", "dragon/wing_left.stl", "Ärger/Über Größe.stl", "100% done/a_b.txt", `back\slash.txt`,
		"ΣΊΣΥΦΟΣ/Παλάτι.obj", "İstanbul/ılık.stl", "x", "dragon\nsecond line.stl", "DRAGON-head-Dragon.stl", "Knight/Body.stl"}
	files := make([]hoard.PackageFile, len(paths))
	for i, path := range paths {
		files[i] = hoard.PackageFile{Path: path, Size: int64(i)}
	}
	must(t, db.ReplacePackageFiles(ctx, p.ID, files))
	x, err := db.LoadFileIndex(ctx, p.ID)
	must(t, err)
	for _, q := range []string{"dragon", "DRAGON", "body", "ä", "ÜBER", "%", "_", `\`, "σίσυφος", "i̇stanbul", "ılık", "x", "stl", ".",
		"\n", "dragon\nsecond", "l\nd", "none", "a_b", "/", "dragon/"} {
		for _, page := range []struct{ after, limit int }{{-1, 100}, {-1, 1}, {0, 2}, {3, 100}, {9, 100}, {20, 5}} {
			want, err := db.ListPackageFiles(ctx, p.ID, page.after, page.limit, q)
			must(t, err)
			_, lower, err := db.FileSearchVersion(ctx, p.ID, q)
			must(t, err)
			got, err := db.ListPackageFilesAt(ctx, p.ID, x.Find(lower, page.after, page.limit), q)
			must(t, err)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%q after %d limit %d: index lists %v, the database %v", q, page.after, page.limit, paths_(got), paths_(want))
			}
		}
	}
	if _, err := db.LoadFileIndex(ctx, -1); hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Errorf("index of no package: %v", err)
	}
	empty := mustPackage(t, db)
	if x, err := db.LoadFileIndex(ctx, empty.ID); err != nil || x.Find("a", -1, 10) != nil {
		t.Errorf("index of a package without entries: %v, %v", x, err)
	}
}

// paths_ names the entries of a listing, for messages.
func paths_(files []hoard.PackageFile) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Path
	}
	return strings.Join(names, " | ")
}
