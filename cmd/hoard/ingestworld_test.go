package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hoard/hoard/archive/rarwriter"
	"github.com/hoard/hoard/demo"
	"github.com/hoard/hoard/demo/models"
)

// ingestThreshold is the lowered SPLIT_THRESHOLD_BYTES of the ingestion
// world: "Big Pack.zip" (2.5 MiB) is split into three parts.
const ingestThreshold = 1 << 20

// wantPackage is what the catalog must hold for one distinct source file.
type wantPackage struct {
	Type      string
	Parts     int  // part_count and len(dest_message_ids)
	Files     int  // file_count; -1: listing failed (inspection note, no entries)
	Preview   bool // has_preview: a posted photo, an image in the archive, or its 3D model rendered
	PhotoPrev bool // preview_msg_id set (the preview is a posted photo)
	Creator   string
	FirstTag  string
}

// ingestWorld is a seed for `hoard demo --seed S --once` that exercises the
// ingestion rules, its files (and photo) spread over the five DCs as a
// real channel's are: plain and forum channels, every archive kind and
// multi-part style, archives from 7-Zip when it is installed, corrupt and
// hostile archives, documents, duplicates of all four kinds, an album with
// a photo, captions and replies, a file over the lowered split threshold,
// flood waits, a stall, a download that always fails, an incomplete set and
// a channel that becomes inaccessible.
type ingestWorld struct {
	Seed string
	// Packages by file name.
	Packages map[string]wantPackage
	// Skipped is "file name|reason|status|attempts" per skipped set.
	Skipped []string
	// Notifications is "type" per notification the rules call for.
	Notifications []string
	// Groups is "source|name|member, member, …" per group (members by file
	// name), sorted.
	Groups []string
	// Ungrouped are the file names of the packages in no group, sorted.
	Ungrouped []string
	// Duplicates is how many sets the run must count as duplicates.
	Duplicates int
}

// writeIngestWorld writes the ingestion world into dir; maxAttempts is the
// WORKER_MAX_SKIP_ATTEMPTS the run uses.
func writeIngestWorld(t *testing.T, dir string, maxAttempts int) ingestWorld {
	t.Helper()
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(files, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustZip := func(entries map[string][]byte) []byte {
		t.Helper()
		b, err := demo.Zip(entries)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	w := ingestWorld{Packages: map[string]wantPackage{}}
	const (
		mammoth = "Mammoth Factory"
		forge   = "Dragon Forge"
	)

	// Mammoth Factory [Completed] 🦣: plain, unprotected (documents are
	// re-sent), category STL.
	write("cover.jpg", demo.JPEG(200, 150, 40))
	write("Mammoth Factory - 2024-01.zip", mustZip(map[string][]byte{
		"Mammoth Factory - 2024-01/cover.jpg":        demo.JPEG(320, 240, 90),
		"Mammoth Factory - 2024-01/Mammoth/body.stl": demo.STL("body"), "Mammoth Factory - 2024-01/Mammoth/tusks.stl": demo.STL("tusks")}))
	w.Packages["Mammoth Factory - 2024-01.zip"] = wantPackage{Type: "ZIP", Parts: 1, Files: 3, Preview: true, PhotoPrev: true, Creator: mammoth, FirstTag: "STL"}
	write("Mammoth Factory - 2024-02.zip", mustZip(map[string][]byte{"Sabertooth/preview.jpg": demo.JPEG(320, 240, 160), "Sabertooth/cat.stl": demo.STL("cat")}))
	w.Packages["Mammoth Factory - 2024-02.zip"] = wantPackage{Type: "ZIP", Parts: 1, Files: 2, Preview: true, Creator: mammoth, FirstTag: "STL"}
	write("Mammoth Factory - 2024-03 Mammoth.zip", mustZip(map[string][]byte{"Calf/calf.stl": demo.STL("calf")}))
	write("Mammoth Factory - 2024-03 Hunters.zip", mustZip(map[string][]byte{"Hunters/spear.stl": demo.STL("spear"), "Hunters/bow.stl": demo.STL("bow")}))
	w.Packages["Mammoth Factory - 2024-03 Mammoth.zip"] = wantPackage{Type: "ZIP", Parts: 1, Files: 1, Preview: true, Creator: mammoth, FirstTag: "STL"}
	w.Packages["Mammoth Factory - 2024-03 Hunters.zip"] = wantPackage{Type: "ZIP", Parts: 1, Files: 2, Preview: true, Creator: mammoth, FirstTag: "STL"}
	r := rand.New(rand.NewPCG(7, 11))
	noise := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	write("Corrupt.zip", noise(40<<10))
	w.Packages["Corrupt.zip"] = wantPackage{Type: "ZIP", Parts: 1, Files: -1, Creator: mammoth, FirstTag: "STL"}
	// Entry names that climb out of any directory: listed, never written.
	var hostile bytes.Buffer
	zw := zip.NewWriter(&hostile)
	for _, name := range []string{"../../../tmp/evil.stl", "/etc/passwd.stl", "ok/fine.stl"} {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.Write(demo.STL(name))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	write("Hostile.zip", hostile.Bytes())
	w.Packages["Hostile.zip"] = wantPackage{Type: "ZIP", Parts: 1, Files: 3, Preview: true, Creator: mammoth, FirstTag: "STL"}
	write("Cursed.zip", noise(10<<10))
	w.Skipped = append(w.Skipped, fmt.Sprintf("Cursed.zip|DOWNLOAD_FAILED|SKIPPED|%d", maxAttempts))
	w.Notifications = append(w.Notifications, "DOWNLOAD_FAILED")
	// Big Pack.zip is a real ZIP the emulator generates on the fly, as the
	// demo's 2.1 GiB sample is: its small files, then a bulk entry of
	// generated bytes; listed from its central directory after the split.
	write("big-preview.jpg", demo.Picture(models.Mammoth(), 320))
	write("big-mammoth.stl", models.Mammoth().BinarySTL())
	bigZip := map[string]any{"entries": []map[string]any{
		{"name": "Big Pack/preview.jpg", "file": "files/big-preview.jpg"}, {"name": "Big Pack/mammoth.stl", "file": "files/big-mammoth.stl"}},
		"bulk": "Big Pack/Sliced/Big Pack.ctb"}
	w.Packages["Big Pack.zip"] = wantPackage{Type: "ZIP", Parts: 3, Files: 3, Preview: true, Creator: mammoth, FirstTag: "STL"}
	mammothPosts := []map[string]any{
		{"file": "files/Mammoth Factory - 2024-01.zip", "caption": "January release: mammoth", "album": 7, "date": "2024-01-05T10:00:00Z", "dc": 1},
		{"photo": "files/cover.jpg", "album": 7, "date": "2024-01-05T10:00:00Z", "dc": 3},
		{"file": "files/Mammoth Factory - 2024-02.zip", "caption": "February release: sabertooth", "date": "2024-02-03T09:00:00Z", "dc": 4},
		{"file": "files/Mammoth Factory - 2024-01.zip", "same_document_as": 0}, // duplicate (a): same document
		{"file": "files/Mammoth Factory - 2024-02.zip", "caption": "reposted"}, // duplicate (c): same name and size
		{"text": "Thanks for the support!", "reply_to": 2},
		{"generate": map[string]any{"name": "Big Pack.zip", "size": 5 * ingestThreshold / 2, "seed": 42, "zip": bigZip}, "caption": "The big one", "dc": 5},
		{"file": "files/Corrupt.zip", "dc": 3},
		{"file": "files/Hostile.zip", "reply_to": 2},
		{"file": "files/Cursed.zip"},
		{"file": "files/Mammoth Factory - 2024-03 Mammoth.zip", "caption": "March release: the herd", "album": 9, "date": "2024-03-02T09:00:00Z"},
		{"file": "files/Mammoth Factory - 2024-03 Hunters.zip", "album": 9, "date": "2024-03-02T09:00:00Z"},
	}
	w.Duplicates += 2

	// Dragon Forge (Paid): plain, protected (everything is uploaded),
	// category Fantasy.
	write("Dragon_Bust_v2_supported.stl", demo.STL("dragon bust"))
	w.Packages["Dragon_Bust_v2_supported.stl"] = wantPackage{Type: "DOCUMENT", Parts: 1, Files: 1, Preview: true, Creator: forge, FirstTag: "Fantasy"}
	set := mustZip(map[string][]byte{"Hoard Set/chest.stl": demo.STL(strings.Repeat("chest ", 4000)), "Hoard Set/cover.jpg": demo.JPEG(640, 480, 20)})
	write("Hoard Set.zip.001", set[:len(set)/2])
	write("Hoard Set.zip.002", set[len(set)/2:])
	w.Packages["Hoard Set.zip"] = wantPackage{Type: "ZIP", Parts: 2, Files: 2, Preview: true, Creator: forge, FirstTag: "Fantasy"}
	single := rarwriter.Write([]rarwriter.File{{Name: "Goblin Camp/goblin.stl", Data: demo.STL("goblin")},
		{Name: "Goblin Camp/thumb.jpg", Data: demo.JPEG(200, 150, 120)}}, rarwriter.Options{})
	write("Goblin Camp.zip", single[0]) // a RAR behind a .zip name: the content decides
	w.Packages["Goblin Camp.zip"] = wantPackage{Type: "RAR", Parts: 1, Files: 2, Preview: true, Creator: forge, FirstTag: "Fantasy"}
	vols := rarwriter.Write([]rarwriter.File{{Name: "Orc Warband/orc.stl", Data: demo.STL(strings.Repeat("orc ", 3000))},
		{Name: "Orc Warband/cover.jpg", Data: demo.JPEG(320, 240, 60)}}, rarwriter.Options{VolumeSize: 8 << 10})
	if len(vols) < 3 {
		t.Fatalf("rar volumes: %d, want at least 3", len(vols))
	}
	for i, v := range vols {
		write(fmt.Sprintf("Orc Warband.part%d.rar", i+1), v)
	}
	w.Packages["Orc Warband.rar"] = wantPackage{Type: "RAR", Parts: len(vols), Files: 2, Preview: true, Creator: forge, FirstTag: "Fantasy"}
	broken := rarwriter.Write([]rarwriter.File{{Name: "Broken/b.stl", Data: noise(40 << 10)}}, rarwriter.Options{VolumeSize: 16 << 10})
	write("Broken Set.part1.rar", broken[0])
	write("Broken Set.part3.rar", broken[2])
	w.Skipped = append(w.Skipped, "Broken Set.rar|INCOMPLETE_SET|SKIPPED|0")
	write("Painting Guide.pdf", demo.PDF("Painting guide"))
	forgePosts := []map[string]any{
		{"file": "files/Dragon_Bust_v2_supported.stl", "caption": "Dragon bust, presupported", "dc": 5},
		{"file": "files/Hoard Set.zip.001", "dc": 1},
		{"file": "files/Hoard Set.zip.002", "dc": 4},
		{"file": "files/Goblin Camp.zip", "caption": "Goblin camp", "dc": 3},
		{"file": "files/Broken Set.part1.rar"},
		{"file": "files/Broken Set.part3.rar"},
	}
	for i := range vols {
		forgePosts = append(forgePosts, map[string]any{"file": fmt.Sprintf("files/Orc Warband.part%d.rar", i+1), "dc": 1 + i%5})
	}
	if _, err := exec.LookPath("7zz"); err == nil {
		// Archives made by 7-Zip itself: a 7z archive, a 7z split into
		// volumes (x.7z.001 …) and a ZIP.
		src := filepath.Join(dir, "knight")
		if err := os.MkdirAll(filepath.Join(src, "Knight Helmet"), 0o755); err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(src, "Knight Helmet", "helmet.stl"), demo.STL("helmet"), 0o644)
		_ = os.WriteFile(filepath.Join(src, "Knight Helmet", "plume.stl"), noise(48<<10), 0o644)
		for _, args := range [][]string{
			{"a", "-bd", "-y", filepath.Join(files, "Knight Helmet.7z"), "Knight Helmet"},
			{"a", "-bd", "-y", "-mx0", "-v20k", filepath.Join(files, "Knight Shield.7z"), "Knight Helmet"},
			{"a", "-bd", "-y", "-tzip", filepath.Join(files, "Knight Sword.zip"), "Knight Helmet"},
		} {
			cmd := exec.Command("7zz", args...)
			cmd.Dir = src
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("7zz %v: %v: %s", args, err, out)
			}
		}
		forgePosts = append(forgePosts, map[string]any{"file": "files/Knight Helmet.7z", "caption": "Knight helmet"},
			map[string]any{"file": "files/Knight Sword.zip"})
		w.Packages["Knight Helmet.7z"] = wantPackage{Type: "7Z", Parts: 1, Files: 1, Preview: true, Creator: forge, FirstTag: "Fantasy"}
		w.Packages["Knight Sword.zip"] = wantPackage{Type: "ZIP", Parts: 1, Files: 2, Preview: true, Creator: forge, FirstTag: "Fantasy"}
		vols, _ := filepath.Glob(filepath.Join(files, "Knight Shield.7z.*"))
		if len(vols) < 2 {
			t.Fatalf("7zz -v made %d volumes", len(vols))
		}
		for _, v := range vols {
			forgePosts = append(forgePosts, map[string]any{"file": "files/" + filepath.Base(v)})
		}
		w.Packages["Knight Shield.7z"] = wantPackage{Type: "7Z", Parts: len(vols), Files: 1, Preview: true, Creator: forge, FirstTag: "Fantasy"}
	}

	// STL Emporium: a forum; the topic name is the creator, except in the
	// General topic.
	write("Dragon Wings.zip", mustZip(map[string][]byte{"Dragon Wings/render.jpg": demo.JPEG(300, 200, 200),
		"Dragon Wings/left.stl": demo.STL("left"), "Dragon Wings/right.stl": demo.STL("right")}))
	write("Castle Walls.zip", mustZip(map[string][]byte{"Castle/walls.stl": demo.STL("walls"), "Castle/gate.stl": demo.STL("gate")}))
	w.Packages["Painting Guide.pdf"] = wantPackage{Type: "DOCUMENT", Parts: 1, Files: 1, Creator: "STL Emporium", FirstTag: "STL"}
	// Paint Shop's "Guide Copy.pdf" has the same bytes, posted later: a
	// duplicate (d), whichever copy is ingested first.
	w.Duplicates++
	w.Packages["Dragon Wings.zip"] = wantPackage{Type: "ZIP", Parts: 1, Files: 3, Preview: true, Creator: "Dragons", FirstTag: "STL"}
	w.Packages["Castle Walls.zip"] = wantPackage{Type: "ZIP", Parts: 1, Files: 2, Preview: true, Creator: "Terrain", FirstTag: "STL"}

	// Lost Vault: readable while hoard sets it up, inaccessible when scanned.
	write("Vault.pdf", demo.PDF("vault"))
	w.Notifications = append(w.Notifications, "CHANNEL_ACCESS_LOST")

	var forgePackages []string
	for name, p := range w.Packages {
		if p.Creator == forge {
			forgePackages = append(forgePackages, name)
		}
	}
	slices.Sort(forgePackages)
	// Groups as a collector would make them: a time group is one creator's
	// release, named by its first caption that names something. The
	// forum's topics (Dragons, Terrain) are posted a minute apart but are
	// two creators: no group.
	w.Groups = []string{
		"ALBUM|March release: the herd|Mammoth Factory - 2024-03 Hunters.zip, Mammoth Factory - 2024-03 Mammoth.zip", // one platform album
		"AUTO_REPLY|February release: sabertooth|Hostile.zip, Mammoth Factory - 2024-02.zip",                         // Hostile.zip replies to the February post
		"AUTO_TIME|Dragon bust, presupported|" + strings.Join(forgePackages, ", "),                                   // Dragon Forge, posted minutes apart
		"AUTO_TIME|The big one|Big Pack.zip, Corrupt.zip",                                                            // Mammoth Factory's Big Pack and Corrupt, a minute apart
	}
	grouped := map[string]bool{}
	for _, g := range w.Groups {
		for m := range strings.SplitSeq(g[strings.LastIndexByte(g, '|')+1:], ", ") {
			grouped[m] = true
		}
	}
	for name := range w.Packages {
		if !grouped[name] {
			w.Ungrouped = append(w.Ungrouped, name)
		}
	}
	slices.Sort(w.Ungrouped)

	seed := map[string]any{
		"account":     map[string]any{"phone": "+15550000001", "premium": false},
		"bot":         map[string]any{"username": "hoard_test_bot", "token": "111:test"},
		"destination": map[string]any{"title": "Hoard Archive", "username": "hoardarchive"},
		"channels": []map[string]any{
			{"title": "Mammoth Factory [Completed] 🦣", "username": "mammothfactory", "joined": true, "category": "STL", "posts": mammothPosts},
			{"title": "Dragon Forge (Paid)", "username": "dragonforge", "joined": true, "protected": true, "category": "Fantasy", "posts": forgePosts},
			{"title": "STL Emporium", "username": "emporium", "joined": true, "forum": true, "category": "STL",
				"posts": []map[string]any{{"file": "files/Painting Guide.pdf", "caption": "Read me first", "date": "2023-06-01T12:00:00Z"}},
				"topics": []map[string]any{
					{"title": "Dragons", "posts": []map[string]any{{"file": "files/Dragon Wings.zip", "caption": "Dragon wings", "dc": 1}}},
					{"title": "Terrain", "posts": []map[string]any{{"file": "files/Castle Walls.zip", "dc": 5}}},
				}},
			// Alone in its channel and far in time from the forum's guide.
			{"title": "Paint Shop", "username": "paintshop", "joined": true, "category": "Paint",
				"posts": []map[string]any{{"file": "files/Painting Guide.pdf", "name": "Guide Copy.pdf"}}}, // duplicate (d) of the forum's guide
			{"title": "Lost Vault", "username": "lostvault", "joined": true, "category": "STL",
				"posts": []map[string]any{{"file": "files/Vault.pdf"}}},
		},
		"faults": []map[string]any{
			// Set-up reads the channel once; every later read fails.
			{"method": "channels.getChannels", "channel": "lostvault", "error": "CHANNEL_PRIVATE", "after": 1},
			{"method": "upload.getFile", "file": "Cursed.zip", "error": "LIMIT_INVALID"},
			{"method": "upload.getFile", "error": "FLOOD_WAIT_1", "after": 2, "times": 2},
			{"method": "upload.getFile", "stall_ms": 3000, "after": 6, "times": 1},
			{"method": "upload.saveFilePart", "error": "FLOOD_WAIT_1", "after": 1, "times": 1},
		},
	}
	w.Seed = writeSeed(t, dir, seed)
	return w
}
