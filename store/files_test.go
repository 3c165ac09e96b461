package store_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
)

func TestReplacePackageFiles(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	p := mustPackage(t, db)
	other := mustPackage(t, db)
	must(t, db.ReplacePackageFiles(ctx, other.ID, []hoard.PackageFile{{Path: "keep.stl", Size: 1}}))

	files := []hoard.PackageFile{
		{Path: "Dragon/Body.STL", Size: 100, CompressedSize: 40, CRC32: crc(0x1234abcd)},
		{Path: "Dragon/supports/", Size: 0},                                         // a directory: name from the last element
		{Path: "readme", Size: 5, CRC32: crc(0)},                                    // no extension, CRC zero is not NULL
		{Path: "x/archive.tar.GZ", Size: 7, CRC32: crc(0xFFFFFFFF)},                 // highest CRC
		{Path: "x/custom.bin", FileName: "Given.Name", Extension: "given", Size: 9}, // explicit values win
	}
	must(t, db.ReplacePackageFiles(ctx, p.ID, files))

	got, err := db.ListPackageFiles(ctx, p.ID, -1, 100, "")
	must(t, err)
	want := []struct {
		path, name, ext string
		size, comp      int64
		crc             *uint32
	}{
		{"Dragon/Body.STL", "Body.STL", "stl", 100, 40, crc(0x1234abcd)},
		{"Dragon/supports/", "supports", "", 0, 0, nil},
		{"readme", "readme", "", 5, 0, crc(0)},
		{"x/archive.tar.GZ", "archive.tar.GZ", "gz", 7, 0, crc(0xFFFFFFFF)},
		{"x/custom.bin", "Given.Name", "given", 9, 0, nil},
	}
	if len(got) != len(want) {
		t.Fatalf("%d files, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		type file struct {
			HasID                     bool
			PackageID                 int64
			Ordinal                   int
			Path, FileName, Extension string
			Size, CompressedSize      int64
		}
		if diff := cmp.Diff(file{true, p.ID, i, w.path, w.name, w.ext, w.size, w.comp},
			file{g.ID != 0, g.PackageID, g.Ordinal, g.Path, g.FileName, g.Extension, g.Size, g.CompressedSize}); diff != "" {
			t.Errorf("file %d (-want +got):\n%s", i, diff)
		}
		switch {
		case w.crc == nil && g.CRC32 != nil:
			t.Errorf("file %d: CRC32 = %#x, want NULL", i, *g.CRC32)
		case w.crc != nil && (g.CRC32 == nil || *g.CRC32 != *w.crc):
			t.Errorf("file %d: CRC32 = %v, want %#x", i, g.CRC32, *w.crc)
		}
	}
	pkg, err := db.FindPackageByID(ctx, p.ID)
	must(t, err)
	if pkg.FileCount != len(files) {
		t.Fatalf("file_count = %d, want %d", pkg.FileCount, len(files))
	}

	// Replacing removes the old rows and renumbers from 0.
	must(t, db.ReplacePackageFiles(ctx, p.ID, []hoard.PackageFile{{Path: "new/only.3mf", Size: 3}}))
	got, err = db.ListPackageFiles(ctx, p.ID, -1, 100, "")
	must(t, err)
	if len(got) != 1 || got[0].Path != "new/only.3mf" || got[0].Ordinal != 0 || got[0].Extension != "3mf" {
		t.Fatalf("after replace: %+v", got)
	}
	pkg, _ = db.FindPackageByID(ctx, p.ID)
	if pkg.FileCount != 1 {
		t.Fatalf("file_count after replace = %d", pkg.FileCount)
	}

	// An empty listing clears the rows and the count.
	must(t, db.ReplacePackageFiles(ctx, p.ID, nil))
	got, err = db.ListPackageFiles(ctx, p.ID, -1, 100, "")
	must(t, err)
	pkg, _ = db.FindPackageByID(ctx, p.ID)
	if len(got) != 0 || pkg.FileCount != 0 {
		t.Fatalf("after empty replace: %d rows, file_count %d", len(got), pkg.FileCount)
	}

	// The other package was never touched.
	kept, err := db.ListPackageFiles(ctx, other.ID, -1, 100, "")
	must(t, err)
	if len(kept) != 1 || kept[0].Path != "keep.stl" {
		t.Fatalf("other package's files = %+v", kept)
	}
}

func TestReplacePackageFilesUnknownPackage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, n := range []int{0, 1, 3} {
		t.Run(fmt.Sprintf("%d files", n), func(t *testing.T) {
			db := storetest.NewTx(t)
			files := make([]hoard.PackageFile, n)
			for i := range files {
				files[i] = hoard.PackageFile{Path: fmt.Sprintf("f%d.stl", i)}
			}
			wantCode(t, db.ReplacePackageFiles(ctx, -1, files), hoard.ENOTFOUND)
			// The failure rolled back its savepoint: the transaction is
			// usable and nothing was written.
			var rows int
			must(t, db.Tx().QueryRow(ctx, `SELECT count(*) FROM package_files WHERE package_id = -1`).Scan(&rows))
			if rows != 0 {
				t.Fatalf("%d rows written for an unknown package", rows)
			}
		})
	}
}

func TestReplacePackageFilesLarge(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	p := mustPackage(t, db)
	const n = 10_000
	files := make([]hoard.PackageFile, n)
	for i := range files {
		files[i] = hoard.PackageFile{Path: fmt.Sprintf("dir%02d/part_%05d.stl", i%50, i), Size: int64(i), CRC32: crc(uint32(i) * 2654435761)}
	}
	must(t, db.ReplacePackageFiles(ctx, p.ID, files))
	pkg, err := db.FindPackageByID(ctx, p.ID)
	must(t, err)
	if pkg.FileCount != n {
		t.Fatalf("file_count = %d, want %d", pkg.FileCount, n)
	}
	// Walk every page of the maximum size: all entries, in order, once.
	after, seen := -1, 0
	for {
		page, err := db.ListPackageFiles(ctx, p.ID, after, 1000, "")
		must(t, err)
		if len(page) == 0 {
			break
		}
		for _, f := range page {
			type entry struct {
				Ordinal int
				Path    string
				Size    int64
				CRC32   *uint32
			}
			if diff := cmp.Diff(entry{seen, files[seen].Path, int64(seen), files[seen].CRC32}, entry{f.Ordinal, f.Path, f.Size, f.CRC32}); diff != "" {
				t.Fatalf("entry %d (-want +got):\n%s", seen, diff)
			}
			seen++
		}
		after = page[len(page)-1].Ordinal
	}
	if seen != n {
		t.Fatalf("paged %d entries, want %d", seen, n)
	}
}

func TestListPackageFiles(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	p := mustPackage(t, db)
	paths := []string{
		"Models/Dragon.stl", // 0
		"models/dragon_v2.STL",
		"100%/scale.stl",
		"100x/scale.stl",
		"a_b.txt",
		"axb.txt", // 5
		`back\slash.txt`,
		"Other.pdf",
		"Long/A Very Long Folder Name Of Forty-Two Chars/x.stl", // 8
		"Long/A Very Long Folder Name Of Forty-Two/y.stl",
	}
	files := make([]hoard.PackageFile, len(paths))
	for i, path := range paths {
		files[i] = hoard.PackageFile{Path: path}
	}
	big := make([]hoard.PackageFile, 1500)
	for i := range big {
		big[i] = hoard.PackageFile{Path: fmt.Sprintf("f%04d", i)}
	}
	bigPkg := mustPackage(t, db)
	must(t, db.ReplacePackageFiles(ctx, p.ID, files))
	must(t, db.ReplacePackageFiles(ctx, bigPkg.ID, big))

	tests := []struct {
		name  string
		pkg   int64
		after int
		limit int
		query string
		want  []int // ordinals
	}{
		{"all from the start", p.ID, -1, 100, "", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"first page", p.ID, -1, 3, "", []int{0, 1, 2}},
		{"next page after ordinal", p.ID, 2, 3, "", []int{3, 4, 5}},
		{"last page", p.ID, 7, 3, "", []int{8, 9}},
		{"past the end", p.ID, 9, 3, "", nil},
		{"query is case-insensitive", p.ID, -1, 100, "DRAGON", []int{0, 1}},
		{"query with paging", p.ID, 0, 100, "dragon", []int{1}},
		{"percent matches literally", p.ID, -1, 100, "%", []int{2}},
		{"percent inside a word", p.ID, -1, 100, "100%/", []int{2}},
		{"underscore matches literally", p.ID, -1, 100, "a_b", []int{4}},
		{"lone underscore", p.ID, -1, 100, "_", []int{1, 4}},
		{"backslash matches literally", p.ID, -1, 100, `\`, []int{6}},
		{"no match", p.ID, -1, 100, "nothing", nil},
		{"unknown package", -1, -1, 100, "", nil},
		{"after an ordinal past every INTEGER", p.ID, 1 << 40, 100, "", nil},
		{"query after an ordinal past every INTEGER", p.ID, math.MaxInt, 100, "dragon", nil},
		{"after below -1 is from the start", p.ID, -1 << 40, 2, "", []int{0, 1}},
		{"query of 200 characters", p.ID, -1, 100, strings.Repeat("dragon ", 29)[:200], nil},
		// Longer than the part the index is asked for: matched whole.
		{"long query", p.ID, -1, 100, "a very long folder name of forty-two chars/", []int{8}},
		{"long query sharing the indexed head", p.ID, -1, 100, "A VERY LONG FOLDER NAME OF FORTY-TWO/", []int{9}},
		{"long query with a wildcard past the head", p.ID, -1, 100, "A Very Long Folder Name Of Forty-Two%/x", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.ListPackageFiles(ctx, tt.pkg, tt.after, tt.limit, tt.query)
			must(t, err)
			var ords []int
			for _, f := range got {
				ords = append(ords, f.Ordinal)
			}
			if !slices.Equal(ords, tt.want) {
				t.Fatalf("ordinals = %v, want %v", ords, tt.want)
			}
		})
	}

	limits := []struct {
		limit, want int
	}{{0, 100}, {-5, 100}, {1, 1}, {1000, 1000}, {1001, 100}, {1 << 30, 100}}
	for _, l := range limits {
		t.Run(fmt.Sprintf("limit %d", l.limit), func(t *testing.T) {
			got, err := db.ListPackageFiles(ctx, bigPkg.ID, -1, l.limit, "")
			must(t, err)
			if len(got) != l.want {
				t.Fatalf("%d entries, want %d", len(got), l.want)
			}
		})
	}
}

func TestReplacePackageFilesConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	p := mustPackage(t, db)
	const writers, rounds = 4, 5
	listing := func(w int) []hoard.PackageFile {
		files := make([]hoard.PackageFile, 50+w*10)
		for i := range files {
			files[i] = hoard.PackageFile{Path: fmt.Sprintf("w%d/f%03d.stl", w, i), Size: int64(w)}
		}
		return files
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				errs <- db.ReplacePackageFiles(ctx, p.ID, listing(w))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent ReplacePackageFiles: %v", err)
		}
	}
	// The stored listing is exactly one writer's, and the count matches.
	got, err := db.ListPackageFiles(ctx, p.ID, -1, 1000, "")
	must(t, err)
	pkg, err := db.FindPackageByID(ctx, p.ID)
	must(t, err)
	if len(got) == 0 || pkg.FileCount != len(got) {
		t.Fatalf("%d rows, file_count %d", len(got), pkg.FileCount)
	}
	w := int(got[0].Size)
	want := listing(w)
	if len(got) != len(want) {
		t.Fatalf("%d rows, want writer %d's %d", len(got), w, len(want))
	}
	for i, f := range got {
		if f.Path != want[i].Path || f.Ordinal != i {
			t.Fatalf("row %d = %+v, want %s (listings mixed)", i, f, want[i].Path)
		}
	}
}
