package main

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"context"
	be "encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/demo"
	"github.com/hoard/hoard/store/storetest"
)

// hostileWorld is a seed whose channels mix posts a stranger crafted to
// break ingestion (NUL and invalid UTF-8 in names, captions, channel and
// topic titles; direction overrides; a 3,000-character name; archives with
// hostile entry paths; a decompression-bomb preview) with ordinary posts
// before and after each of them.
type hostileWorld struct {
	Seed     string
	Packages map[string]wantPackage
	// Paths are the stored entry paths of the hostile archive, sorted.
	Paths []string
	// Captions are the stored captions by package name.
	Captions map[string]string
	// Titles are the stored channel titles and topic names, sorted.
	Titles []string
}

// zipOf builds a ZIP with entries in the given order; names are raw bytes.
func zipOf(t *testing.T, entries ...[2]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range entries {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: e[0], Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(e[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bombPNG is a valid w×h one-bit grayscale PNG of zeros: tens of kilobytes
// that decode to w×h pixels (20000×20000 = 400 million).
func bombPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		var n [4]byte
		be.BigEndian.PutUint32(n[:], uint32(len(data)))
		out.Write(n[:])
		c := crc32.NewIEEE()
		c.Write([]byte(typ))
		c.Write(data)
		out.WriteString(typ)
		out.Write(data)
		be.BigEndian.PutUint32(n[:], c.Sum32())
		out.Write(n[:])
	}
	ihdr := make([]byte, 13)
	be.BigEndian.PutUint32(ihdr[0:], uint32(w))
	be.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 1, 0 // bit depth 1, grayscale
	chunk("IHDR", ihdr)
	var idat bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&idat, zlib.BestCompression)
	row := make([]byte, 1+(w+7)/8) // filter byte + packed bits
	for range h {
		_, _ = zw.Write(row)
	}
	_ = zw.Close()
	chunk("IDAT", idat.Bytes())
	chunk("IEND", nil)
	return out.Bytes()
}

// writeHostileWorld writes the hostile world into dir.
func writeHostileWorld(t *testing.T, dir string) hostileWorld {
	t.Helper()
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	n := 0
	file := func(data []byte) string {
		t.Helper()
		n++
		name := filepath.Join("files", fmt.Sprintf("file-%03d", n))
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	w := hostileWorld{Packages: map[string]wantPackage{}, Captions: map[string]string{}}
	pkg := func(stored string, p wantPackage) { w.Packages[stored] = p }
	ordinary := func(name, tag, creator string) map[string]any {
		pkg(name, wantPackage{Type: "ZIP", Parts: 1, Files: 1, Preview: true, Creator: creator, FirstTag: tag}) // its model, rendered
		return map[string]any{"file": file(zipOf(t, [2]string{name + "/model.stl", string(demo.STL(name))})), "name": name}
	}
	document := func(raw string) string { return file(demo.STL(raw)) }

	// Hostile Names: names and captions.
	const names = "Hostile Names"
	longName := strings.Repeat("L", 2996) + ".zip"
	longStored := hoard.StorableFileName(longName)
	pkg("evil\uFFFDnul.stl", wantPackage{Type: "DOCUMENT", Parts: 1, Files: 1, Preview: true, Creator: names, FirstTag: "STL"})
	pkg("caf\uFFFD pack.stl", wantPackage{Type: "DOCUMENT", Parts: 1, Files: 1, Preview: true, Creator: names, FirstTag: "STL"})
	pkg("invoice\u202Egpj.stl", wantPackage{Type: "DOCUMENT", Parts: 1, Files: 1, Preview: true, Creator: names, FirstTag: "STL"})
	pkg(longStored, wantPackage{Type: "ZIP", Parts: 1, Files: 1, Creator: names, FirstTag: "STL"}) // "solid long": nothing to draw
	pkg("Captioned NUL.stl", wantPackage{Type: "DOCUMENT", Parts: 1, Files: 1, Preview: true, Creator: names, FirstTag: "STL"})
	pkg("Captioned Bytes.stl", wantPackage{Type: "DOCUMENT", Parts: 1, Files: 1, Preview: true, Creator: names, FirstTag: "STL"})
	w.Captions["Captioned NUL.stl"] = "bad\uFFFDcaption"
	w.Captions["Captioned Bytes.stl"] = "caf\uFFFD \u202Ecaption"
	namePosts := []map[string]any{
		ordinary("Names Before.zip", "STL", names),
		{"file": document("nul"), "name": "evil\x00nul.stl"},
		ordinary("Names After NUL.zip", "STL", names),
		{"file": document("bytes"), "name_bytes": []byte("caf\xe9 pack.stl")},
		ordinary("Names After Bytes.zip", "STL", names),
		{"file": document("override"), "name": "invoice\u202Egpj.stl"},
		ordinary("Names After Override.zip", "STL", names),
		{"file": file(zipOf(t, [2]string{"long/model.stl", "solid long"})), "name": longName},
		ordinary("Names After Long.zip", "STL", names),
		{"file": document("captioned"), "name": "Captioned NUL.stl", "caption": "bad\x00caption"},
		{"file": document("captioned bytes"), "name": "Captioned Bytes.stl", "caption_bytes": []byte("caf\xe9 \u202Ecaption")},
		ordinary("Names Last.zip", "STL", names),
	}

	// A channel whose title holds a NUL; its creator comes from the title
	// (whose cleaning drops the replacement character like other symbols).
	const nulTitleCreator = "Evil Title"
	nulPosts := []map[string]any{
		ordinary("Title Before.zip", "Props", nulTitleCreator),
		ordinary("Title After.zip", "Props", nulTitleCreator),
	}
	// A channel whose title is invalid UTF-8.
	const badTitleCreator = "Bad Title"
	badPosts := []map[string]any{ordinary("Bytes Title Pack.zip", "Props", badTitleCreator)}

	// A forum whose topic titles hold a NUL and invalid UTF-8: the topic is
	// the creator.
	topicPosts := func(prefix, creator string) []map[string]any {
		return []map[string]any{ordinary(prefix+" Before.zip", "Forum", creator), ordinary(prefix+" After.zip", "Forum", creator)}
	}

	// Hostile Archives: entry paths and a decompression-bomb preview.
	const archives = "Hostile Archives"
	deep := "deep/" + strings.Repeat("d", 4990) + ".stl"
	hostileZip := zipOf(t, [2]string{"ok/fine.stl", "solid fine"}, [2]string{"nul\x00entry.stl", "solid nul"},
		[2]string{"bad\xffname.stl", "solid bad"}, [2]string{deep, "solid deep"}, [2]string{"rtl/\u202Egpj.stl", "solid rtl"})
	pkg("Hostile Entries.zip", wantPackage{Type: "ZIP", Parts: 1, Files: 5, Creator: archives, FirstTag: "STL"})
	w.Paths = []string{"bad\uFFFDname.stl", hoard.StorableLongText(deep, hoard.MaxEntryPathLen), "nul\uFFFDentry.stl", "ok/fine.stl",
		"rtl/\u202Egpj.stl"}
	slices.Sort(w.Paths)
	bomb := bombPNG(t, 20000, 20000)
	if len(bomb) < 4<<10 || len(bomb) > 1<<20 {
		t.Fatalf("bomb PNG is %d bytes", len(bomb))
	}
	pkg("Bomb Preview.zip", wantPackage{Type: "ZIP", Parts: 1, Files: 2, Creator: archives, FirstTag: "STL"})
	archivePosts := []map[string]any{
		ordinary("Archives Before.zip", "STL", archives),
		{"file": file(hostileZip), "name": "Hostile Entries.zip"},
		ordinary("Archives Middle.zip", "STL", archives),
		{"file": file(zipOf(t, [2]string{"Bomb/cover.png", string(bomb)}, [2]string{"Bomb/model.stl", "solid bomb"})), "name": "Bomb Preview.zip"},
		ordinary("Archives After.zip", "STL", archives),
	}

	w.Titles = []string{"Bad\uFFFDTitle", "Drag\uFFFDons", "Evil\uFFFDTitle", "General", "Hoard Archive", "Hostile Archives",
		"Hostile Forum", "Hostile Names", "Ter\uFFFDrain"}
	seed := map[string]any{
		"account":     map[string]any{"phone": "+15550000001", "premium": false},
		"bot":         map[string]any{"username": "hoard_test_bot", "token": "111:test"},
		"destination": map[string]any{"title": "Hoard Archive", "username": "hoardarchive"},
		"channels": []map[string]any{
			{"title": names, "username": "hostilenames", "joined": true, "category": "STL", "posts": namePosts},
			{"title": "Evil\x00Title", "username": "niltitle", "joined": true, "category": "Props", "posts": nulPosts},
			{"title": "x", "title_bytes": []byte("Bad\xffTitle"), "username": "badtitle", "joined": true, "category": "Props", "posts": badPosts},
			{"title": "Hostile Forum", "username": "hostileforum", "joined": true, "forum": true, "category": "Forum",
				"topics": []map[string]any{
					{"title": "Drag\x00ons", "posts": topicPosts("Topic NUL", "Drag\uFFFDons")},
					{"title": "x", "title_bytes": []byte("Ter\xferain"), "posts": topicPosts("Topic Bytes", "Ter\uFFFDrain")},
				}},
			{"title": archives, "username": "hostilearchives", "joined": true, "protected": true, "category": "STL", "posts": archivePosts},
		},
	}
	w.Seed = writeSeed(t, dir, seed)
	return w
}

// TestDemoOnceHostileWorld runs one cycle over the hostile world: every
// ordinary post is ingested, every hostile one becomes a package with a
// storable name (or a visible skipped record), and the destination holds
// exactly one post per published part.
func TestDemoOnceHostileWorld(t *testing.T) {
	t.Parallel()
	w := writeHostileWorld(t, t.TempDir())
	dir := dataDir(t)
	url := storetest.URL(t)
	sum := runOnce(t, onceVars(url, dir, 2), w.Seed)
	if sum.RunStatus != "COMPLETED" {
		t.Errorf("run: %+v, want COMPLETED", sum)
	}
	st := readCatalog(t, url)
	checkCatalog(t, ingestWorld{Packages: w.Packages}, st, destinationPosts(t, dir))

	db, done := openStore(t, url)
	defer done()
	ctx := context.Background()
	packages := map[string]hoard.Package{}
	for _, p := range storetest.Packages(t, db) {
		packages[p.FileName] = p
	}
	var paths, titles []string
	for _, f := range storetest.PackageFiles(t, db, packages["Hostile Entries.zip"].ID) {
		paths = append(paths, f.Path)
	}
	channels, err := db.ListChannels(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range channels {
		titles = append(titles, c.Title)
	}
	for _, tp := range storetest.Topics(t, db) {
		titles = append(titles, tp.TopicName)
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"entry paths", paths, w.Paths},
		{"channel titles and topic names", titles, w.Titles},
	} {
		if slices.Sort(c.got); !slices.Equal(c.got, c.want) {
			t.Errorf("%s:\n got  %q\n want %q", c.what, c.got, c.want)
		}
	}
	for name, want := range w.Captions {
		if p, ok := packages[name]; !ok {
			t.Errorf("caption of %q: no such package", name)
		} else if p.SourceCaption != want {
			t.Errorf("caption of %q = %q, want %q", name, p.SourceCaption, want)
		}
	}
}
