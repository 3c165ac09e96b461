package store_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// pathChunk is a row of package_paths as the test compares it.
type pathChunk struct {
	Chunk int
	Paths string
}

// TestPackagePathsFollowTheListing checks that package_paths, the
// lower-cased paths the catalog search matches, follows every change to
// package_files, by ReplacePackageFiles or by any other statement.
func TestPackagePathsFollowTheListing(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	p := mustPackage(t, db)
	other := mustPackage(t, db)
	must(t, db.ReplacePackageFiles(ctx, other.ID, []hoard.PackageFile{{Path: "Other/Keep.STL"}}))
	chunks := func(id int64) []pathChunk {
		t.Helper()
		rows, err := db.Tx().Query(ctx, `SELECT chunk, paths FROM package_paths WHERE package_id = $1 ORDER BY chunk`, id)
		must(t, err)
		defer rows.Close()
		var out []pathChunk
		for rows.Next() {
			var c pathChunk
			must(t, rows.Scan(&c.Chunk, &c.Paths))
			out = append(out, c)
		}
		must(t, rows.Err())
		return out
	}
	var many []hoard.PackageFile
	var first, second []string
	for i := range 300 {
		path := fmt.Sprintf("Set/Part_%03d.STL", i)
		many = append(many, hoard.PackageFile{Path: path})
		if i < 256 {
			first = append(first, strings.ToLower(path))
		} else {
			second = append(second, strings.ToLower(path))
		}
	}
	steps := []struct {
		name string
		do   func()
		want []pathChunk
	}{
		{"a listing, lower-cased", func() {
			must(t, db.ReplacePackageFiles(ctx, p.ID, []hoard.PackageFile{{Path: "Hoard Set/Chest.STL"}, {Path: "Hoard Set/Goblin.stl"}}))
		}, []pathChunk{{0, "hoard set/chest.stl\nhoard set/goblin.stl"}}},
		{"a replaced listing, in chunks of 256", func() { must(t, db.ReplacePackageFiles(ctx, p.ID, many)) },
			[]pathChunk{{0, strings.Join(first, "\n")}, {1, strings.Join(second, "\n")}}},
		{"an entry renamed by hand", func() {
			execTx(t, db, `UPDATE package_files SET path = 'Set/Crown.STL' WHERE package_id = $1 AND ordinal = 299`, p.ID)
		}, []pathChunk{{0, strings.Join(first, "\n")}, {1, strings.Join(append(second[:len(second)-1], "set/crown.stl"), "\n")}}},
		{"entries deleted by hand", func() { execTx(t, db, `DELETE FROM package_files WHERE package_id = $1 AND ordinal >= 1`, p.ID) },
			[]pathChunk{{0, "set/part_000.stl"}}},
		{"an entry added by hand", func() {
			execTx(t, db, `INSERT INTO package_files (package_id, ordinal, path, file_name) VALUES ($1, 1, 'Extra/Base.stl', 'Base.stl')`, p.ID)
		}, []pathChunk{{0, "set/part_000.stl\nextra/base.stl"}}},
		{"an empty listing", func() { must(t, db.ReplacePackageFiles(ctx, p.ID, nil)) }, nil},
	}
	for _, s := range steps {
		s.do()
		if got := chunks(p.ID); !reflect.DeepEqual(got, s.want) {
			t.Fatalf("after %s: package_paths = %+v, want %+v", s.name, got, s.want)
		}
	}
	if got, want := chunks(other.ID), []pathChunk{{0, "other/keep.stl"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("another package's paths = %+v, want %+v", got, want)
	}
	execTx(t, db, `DELETE FROM packages WHERE id = $1`, other.ID)
	if got := chunks(other.ID); got != nil {
		t.Fatalf("a deleted package keeps its paths: %+v", got)
	}
}

// TestSearchFindsPathsInLaterChunks checks that the catalog search finds a
// package by a path past its first chunk of package_paths, in any case,
// and names the file that matched.
func TestSearchFindsPathsInLaterChunks(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	p := mustPackage(t, db, func(p *hoard.Package) { p.FileName = "Vault.zip" })
	var files []hoard.PackageFile
	for i := range 300 {
		files = append(files, hoard.PackageFile{Path: fmt.Sprintf("Vault/piece_%03d.stl", i)})
	}
	files[280].Path = "Vault/Relic_Crown.STL"
	must(t, db.ReplacePackageFiles(ctx, p.ID, files))
	tests := []struct {
		text string
		want found
	}{
		{"relic_crown", found{store.SearchFullText, []string{"Vault.zip [1: [Vault/Relic_Crown.STL]]"}, 1, true}},
		{"RELIC_CROWN.stl", found{store.SearchFullText, []string{"Vault.zip [1: [Vault/Relic_Crown.STL]]"}, 1, true}},
		{"piece_299", found{store.SearchFullText, []string{"Vault.zip [1: [Vault/piece_299.stl]]"}, 1, true}},
		{"piece_279\nvault", found{store.SearchSubstring, nil, 0, true}}, // no path holds a newline
	}
	for _, tt := range tests {
		res, err := db.SearchPackages(ctx, store.SearchQuery{Text: tt.text})
		must(t, err)
		if got := foundOf(res); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %+v, want %+v", tt.text, got, tt.want)
		}
	}
}
