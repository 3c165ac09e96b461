package archive

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard/archive/rarwriter"
)

func TestChoosePreview(t *testing.T) {
	e := func(p string, size int64) Entry { return Entry{Path: p, Size: size, Block: -1} }
	tests := []struct {
		name    string
		entries []Entry
		want    string
	}{
		{"none", []Entry{e("a.stl", 100000), e("readme.txt", 10)}, ""},
		{"only image", []Entry{e("a.stl", 1), e("x/y/photo.JPG", 50000)}, "x/y/photo.JPG"},
		{"cover word wins over depth", []Entry{e("photo.jpg", 50000), e("a/b/Cover.png", 50000)}, "a/b/Cover.png"},
		{"shallow before deep", []Entry{e("a/b/c/1.jpg", 50000), e("a/2.jpg", 50000)}, "a/2.jpg"},
		{"tiny icons last", []Entry{e("thumb.png", 1000), e("deep/er/img.jpg", 50000)}, "deep/er/img.jpg"},
		{"too large never", []Entry{e("cover.jpg", 11<<20)}, ""},
		{"tie on larger size", []Entry{e("b.jpg", 50000), e("a.jpg", 60000)}, "a.jpg"},
		{"tie on path", []Entry{e("b.jpg", 50000), e("a.jpg", 50000)}, "a.jpg"},
		{"renders folder", []Entry{e("x.jpg", 50000), e("renders/x.jpg", 50000)}, "renders/x.jpg"},
		{"macos junk", []Entry{e("__MACOSX/._cover.jpg", 50000), e("z.webp", 50000)}, "z.webp"},
		{"encrypted and dirs skipped", []Entry{{Path: "cover.jpg", Size: 9000, Encrypted: true}, {Path: "d.png/", IsDir: true}, e("p.gif", 9000)}, "p.gif"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ChoosePreview(tt.entries)
			if ok != (tt.want != "") || got.Path != tt.want {
				t.Errorf("got %q, %v; want %q", got.Path, ok, tt.want)
			}
			// Order of entries does not matter.
			rev := make([]Entry, len(tt.entries))
			for i, x := range tt.entries {
				rev[len(rev)-1-i] = x
			}
			if got2, _ := ChoosePreview(rev); got2.Path != got.Path {
				t.Errorf("order dependent: %q vs %q", got2.Path, got.Path)
			}
		})
	}
}

func TestExtract(t *testing.T) {
	ctx := context.Background()
	img := pseudoRandom(20000, 11)
	t.Run("zip", func(t *testing.T) {
		p := writeTemp(t, "x.zip", makeZip(t, []testFile{{"a.stl", pseudoRandom(100000, 1)}, {"img/cover.jpg", img}, {"secret.png", img}},
			zipOpts{encrypted: map[string]bool{"secret.png": true}}))
		data, err := Extract(ctx, ZIP, []string{p}, "img/cover.jpg", ExtractOptions{})
		if err != nil || !bytes.Equal(data, img) {
			t.Fatal(err)
		}
		if _, err := Extract(ctx, ZIP, []string{p}, "secret.png", ExtractOptions{}); !errors.Is(err, ErrEncrypted) {
			t.Errorf("encrypted: %v", err)
		}
		if _, err := Extract(ctx, ZIP, []string{p}, "nope.jpg", ExtractOptions{}); !errors.Is(err, ErrEntryNotFound) {
			t.Errorf("missing: %v", err)
		}
		if _, err := Extract(ctx, ZIP, []string{p}, "img/cover.jpg", ExtractOptions{MaxSize: 1000}); !errors.Is(err, ErrTooLarge) {
			t.Errorf("too large: %v", err)
		}
		if _, err := Extract(ctx, Document, []string{p}, "img/cover.jpg", ExtractOptions{}); !errors.Is(err, ErrNotExtracted) {
			t.Errorf("document: %v", err)
		}
	})
	t.Run("rar", func(t *testing.T) {
		files := []rarwriter.File{{Name: "a.stl", Data: pseudoRandom(30000, 2)}, {Name: "cover.png", Data: img}}
		for _, vs := range []int{0, 9000} {
			p := writeParts(t, t.TempDir(), "x", makeRar(files, rarwriter.Options{VolumeSize: vs}))
			data, err := Extract(ctx, RAR, p, "cover.png", ExtractOptions{})
			if err != nil || !bytes.Equal(data, img) {
				t.Fatalf("volume size %d: %v", vs, err)
			}
		}
	})
	t.Run("rar solid", func(t *testing.T) {
		files := []rarwriter.File{{Name: "a.stl", Data: pseudoRandom(30000, 2)}, {Name: "cover.png", Data: img, Solid: true}}
		p := writeParts(t, t.TempDir(), "x", makeRar(files, rarwriter.Options{Solid: true}))
		data, err := Extract(ctx, RAR, p, "cover.png", ExtractOptions{})
		if err != nil || !bytes.Equal(data, img) {
			t.Fatalf("%v", err)
		}
		if _, err := Extract(ctx, RAR, p, "cover.png", ExtractOptions{MaxDecoded: 1000}); !errors.Is(err, ErrSolidBudget) {
			t.Fatalf("budget: %v", err)
		}
	})
	t.Run("7z", func(t *testing.T) {
		files := []testFile{{"a.stl", bytes.Repeat([]byte("facet normal 0 0 1\n"), 20000)}, {"cover.png", img}}
		paths := make7z(t, files, "-mx=1", "-ms=on")
		data, err := Extract(ctx, SevenZ, paths, "cover.png", ExtractOptions{})
		if err != nil || !bytes.Equal(data, img) {
			t.Fatalf("%v", err)
		}
		_, err = Extract(ctx, SevenZ, paths, "cover.png", ExtractOptions{MaxDecoded: 1000})
		if !errors.Is(err, ErrSolidBudget) || !strings.Contains(err.Error(), "380000 bytes") {
			t.Fatalf("budget: %v", err)
		}
		enc := make7z(t, files, "-mx=1", "-psecret", "-mhe=off")
		if _, err := Extract(ctx, SevenZ, enc, "cover.png", ExtractOptions{}); !errors.Is(err, ErrEncrypted) {
			t.Fatalf("encrypted: %v", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		p := writeTemp(t, "x.zip", makeZip(t, []testFile{{"cover.jpg", img}}, zipOpts{}))
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := Extract(cctx, ZIP, []string{p}, "cover.jpg", ExtractOptions{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("%v", err)
		}
	})
}

func TestMatchPhoto(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ph := func(id, album int64, caption string, d time.Duration) Photo {
		return Photo{ID: id, AlbumID: album, Caption: caption, Date: at.Add(d)}
	}
	tests := []struct {
		name   string
		album  int64
		file   string
		photos []Photo
		want   int64
	}{
		{"none", 0, "Dragon Bust.zip", nil, 0},
		{"same album wins", 7, "x.zip", []Photo{ph(1, 0, "x", time.Minute), ph(2, 7, "", 3*time.Hour)}, 2},
		{"album closest", 7, "x.zip", []Photo{ph(1, 7, "", 2*time.Hour), ph(2, 7, "", -time.Hour)}, 2},
		{"caption contains base", 0, "Dragon_Bust.part1.rar", []Photo{ph(1, 0, "New: Dragon Bust (supported)", time.Hour)}, 1},
		{"base contains caption", 0, "Mammoth Factory - Dragon Bust.zip", []Photo{ph(1, 0, "dragon-bust", time.Hour)}, 1},
		{"partial words do not match", 0, "Dragon.zip", []Photo{ph(1, 0, "Dragonfly", time.Hour)}, 0},
		{"outside window", 0, "Dragon Bust.zip", []Photo{ph(1, 0, "Dragon Bust", 7*time.Hour)}, 0},
		{"closest in time", 0, "Dragon Bust.zip", []Photo{ph(1, 0, "Dragon Bust", 2*time.Hour), ph(2, 0, "Dragon Bust.jpg", -time.Hour)}, 2},
		{"tie to lower id", 0, "Dragon Bust.zip", []Photo{ph(3, 0, "Dragon Bust", time.Hour), ph(2, 0, "Dragon Bust", -time.Hour)}, 2},
		{"empty caption never", 0, "Dragon Bust.zip", []Photo{ph(1, 0, "", 0)}, 0},
		{"album of another archive", 5, "Dragon.zip", []Photo{ph(1, 6, "unrelated", 0)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := MatchPhoto(tt.album, tt.file, at, 0, tt.photos)
			if ok != (tt.want != 0) || got.ID != tt.want {
				t.Errorf("got %d %v, want %d", got.ID, ok, tt.want)
			}
		})
	}
}

// TestExtractByStoredName: with a NameKey, an entry whose name the caller
// stored in another form (NUL and invalid UTF-8 replaced) is found by that
// form, whole and by range; without one, only the exact name matches.
func TestExtractByStoredName(t *testing.T) {
	ctx := context.Background()
	img := pseudoRandom(5000, 3)
	stored := func(name string) string {
		return strings.ToValidUTF8(strings.ReplaceAll(name, "\x00", "\uFFFD"), "\uFFFD")
	}
	data := makeZip(t, []testFile{{"ok.stl", pseudoRandom(1000, 4)}, {"nul\x00dir/c\xffover.png", img}}, zipOpts{})
	p := writeTemp(t, "x.zip", data)
	keyed := ExtractOptions{NameKey: stored}
	type result struct {
		Whole, Ranged, Plain bool
	}
	whole, err1 := Extract(ctx, ZIP, []string{p}, "nul\uFFFDdir/c\uFFFDover.png", keyed)
	ranged, err2 := ReadZipEntry(ctx, bytes.NewReader(data), int64(len(data)), "nul\uFFFDdir/c\uFFFDover.png", keyed)
	_, err3 := Extract(ctx, ZIP, []string{p}, "nul\uFFFDdir/c\uFFFDover.png", ExtractOptions{})
	got := result{Whole: err1 == nil && bytes.Equal(whole, img), Ranged: err2 == nil && bytes.Equal(ranged, img),
		Plain: errors.Is(err3, ErrEntryNotFound)}
	if want := (result{true, true, true}); got != want {
		t.Errorf("got %+v (%v, %v, %v), want %+v", got, err1, err2, err3, want)
	}
}
