// Package demo is `hoard demo` (Run): the sample world it posts (archives,
// documents and models made by code), the steps that sign the emulator's
// account in and set its channels up in the database, and the run itself —
// the whole service, or one ingestion cycle with a summary (--once). The
// service's parts come from cmd/hoard (Options.Open), which wires them; this
// package only drives them.
package demo

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/hoard/hoard/archive/rarwriter"
	"github.com/hoard/hoard/demo/models"
	"github.com/hoard/hoard/mesh"
)

// WriteWorld writes the built-in sample world of `hoard demo` into dir:
// seed.json plus the files it posts (ZIPs with images and STL files in
// folders, RAR archives single and in volumes, a byte-split ZIP set, a 7z
// archive when Debian's 7zip is installed, PDFs, 3D models (STL, OBJ, 3MF) on their own and in
// archives without pictures, a repost, an album with a cover photo, a forum with
// topics, captions and replies, and a generated 2.1 GiB ZIP archive over the split
// threshold), its files spread over the platform's data centres as a real
// channel's are (posters in other regions). It returns the seed file's path.
func WriteWorld(dir string) (string, error) {
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		return "", err
	}
	write := func(name string, data []byte) error { return os.WriteFile(filepath.Join(files, name), data, 0o644) }
	cover := Picture(models.Mammoth(), 320)
	steps := []struct {
		name string
		data func() ([]byte, error)
	}{
		{"cover.jpg", func() ([]byte, error) { return cover, nil }},
		{"Mammoth Factory - 2024-01.zip", func() ([]byte, error) {
			return Zip(map[string][]byte{"Mammoth Factory - 2024-01/cover.jpg": Picture(models.Mammoth(), 480),
				"Mammoth Factory - 2024-01/Mammoth/body.stl": models.Mammoth().BinarySTL(), "Mammoth Factory - 2024-01/Mammoth/tusks.stl": models.ForName("tusks").BinarySTL()})
		}},
		{"Mammoth Factory - 2024-02.zip", func() ([]byte, error) {
			return Zip(map[string][]byte{"Sabertooth/preview.jpg": Picture(models.ForName("cat"), 480), "Sabertooth/cat.stl": models.ForName("cat").BinarySTL()})
		}},
		{"Painting Guide.pdf", func() ([]byte, error) { return PDF("Painting guide"), nil }},
		{"Dragon_Bust_v2_supported.stl", func() ([]byte, error) { return models.Bust().BinarySTL(), nil }},
		{"Dragon Wings.zip", func() ([]byte, error) {
			wing := models.ForName("wing")
			return Zip(map[string][]byte{"Dragon Wings/render.jpg": Picture(wing, 400), "Dragon Wings/left.stl": wing.BinarySTL(), "Dragon Wings/right.stl": wing.BinarySTL()})
		}},
		{"Castle Walls.zip", func() ([]byte, error) {
			return Zip(map[string][]byte{"Castle/walls.stl": models.Tower().BinarySTL(), "Castle/gate.stl": models.Box(models.Vertex{20, 6, 16}).BinarySTL()})
		}},
		// Models without pictures: the catalog shows them rendered (a 3MF
		// shows the thumbnail its slicer saved).
		{"Temple Vase.obj", func() ([]byte, error) { return models.Vase().OBJ(), nil }},
		{"Crystal Gem.3mf", func() ([]byte, error) { return models.Gem().ThreeMF("Crystal gem", nil) }},
		{"Ring Set.3mf", func() ([]byte, error) {
			ring := models.Torus(12, 4, 32, 16)
			return ring.ThreeMF("Ring set", Picture(ring, 256))
		}},
		{"Tabletop Terrain.zip", func() ([]byte, error) {
			return Zip(map[string][]byte{"Terrain/tower.stl": models.Tower().BinarySTL(), "Terrain/helmet.obj": models.Helmet().OBJ()})
		}},
		{"Terrain Rules.pdf", func() ([]byte, error) { return PDF("Terrain rules"), nil }},
	}
	for _, s := range steps {
		data, err := s.data()
		if err == nil {
			err = write(s.name, data)
		}
		if err != nil {
			return "", fmt.Errorf("demo world: %s: %w", s.name, err)
		}
	}
	// RAR archives from our own store-only writer: one single, one in three
	// volumes (x.part1.rar …).
	goblin := models.ForName("goblin")
	single := rarwriter.Write([]rarwriter.File{{Name: "Goblin Camp/goblin.stl", Data: goblin.BinarySTL()},
		{Name: "Goblin Camp/thumb.jpg", Data: Picture(goblin, 320)}}, rarwriter.Options{})
	if err := write("Goblin Camp.rar", single[0]); err != nil {
		return "", err
	}
	orc := models.ForName("orc").BinarySTL()
	vols := rarwriter.Write([]rarwriter.File{{Name: "Orc Warband/orc.stl", Data: orc},
		{Name: "Orc Warband/cover.jpg", Data: Picture(models.ForName("orc"), 320)}}, rarwriter.Options{VolumeSize: len(orc)/3 + 1})
	for i, v := range vols {
		if err := write(fmt.Sprintf("Orc Warband.part%d.rar", i+1), v); err != nil {
			return "", err
		}
	}
	// A ZIP split into byte ranges, as 7-Zip's -v switch does: Hoard Set.zip.001, .002.
	set, err := Zip(map[string][]byte{"Hoard Set/chest.stl": models.ForName("chest").BinarySTL(), "Hoard Set/cover.jpg": Picture(models.ForName("chest"), 640)})
	if err != nil {
		return "", err
	}
	half := len(set) / 2
	if err := write("Hoard Set.zip.001", set[:half]); err != nil {
		return "", err
	}
	if err := write("Hoard Set.zip.002", set[half:]); err != nil {
		return "", err
	}

	diorama, err := writeDiorama(files)
	if err != nil {
		return "", err
	}
	mammothPosts := []map[string]any{
		{"file": "files/Mammoth Factory - 2024-01.zip", "caption": "January release: mammoth", "album": 7, "date": "2024-01-05T10:00:00Z"},
		{"photo": "files/cover.jpg", "album": 7, "date": "2024-01-05T10:00:00Z", "dc": 1},
		{"file": "files/Mammoth Factory - 2024-02.zip", "caption": "February release: sabertooth", "date": "2024-02-03T09:00:00Z", "dc": 4},
		{"file": "files/Mammoth Factory - 2024-01.zip", "same_document_as": 0, "date": "2024-02-10T09:00:00Z"},
		{"text": "Thanks for the support!", "reply_to": 2},
		{"generate": map[string]any{"name": "Mammoth Diorama.zip", "size": int64(2_300_000_000), "seed": 42, "zip": diorama}, "caption": "The big one", "dc": 4},
	}
	forgePosts := []map[string]any{
		{"file": "files/Dragon_Bust_v2_supported.stl", "caption": "Dragon bust, presupported", "dc": 3},
		{"file": "files/Hoard Set.zip.001"},
		{"file": "files/Hoard Set.zip.002"},
		{"file": "files/Painting Guide.pdf", "reply_to": 0},
		{"file": "files/Goblin Camp.rar", "caption": "Goblin camp", "dc": 5},
		{"file": "files/Painting Guide.pdf", "caption": "Guide, posted again (a second upload of the same file)"},
	}
	for i := range vols {
		forgePosts = append(forgePosts, map[string]any{"file": fmt.Sprintf("files/Orc Warband.part%d.rar", i+1), "dc": 1})
	}
	if _, err := exec.LookPath("7zz"); err == nil {
		archive := filepath.Join(files, "Knight Helmet.7z")
		if _, err := os.Stat(archive); err != nil {
			src := filepath.Join(dir, "knight")
			_ = os.MkdirAll(filepath.Join(src, "Knight Helmet"), 0o755)
			_ = os.WriteFile(filepath.Join(src, "Knight Helmet", "helmet.stl"), models.Helmet().ASCIISTL("helmet"), 0o644)
			cmd := exec.Command("7zz", "a", "-bd", "-y", archive, "Knight Helmet")
			cmd.Dir = src
			if out, err := cmd.CombinedOutput(); err != nil {
				return "", fmt.Errorf("demo world: 7zz: %v: %s", err, out)
			}
		}
		forgePosts = append(forgePosts, map[string]any{"file": "files/Knight Helmet.7z", "caption": "Knight helmet"})
	}
	seed := map[string]any{
		"account": map[string]any{"phone": "+15550000001", "premium": false},
		"bot":     map[string]any{"username": "hoard_demo_bot", "token": "111:demo"},
		// People who talk to the bot: `hoard chat --as alice`.
		"users": []map[string]any{
			{"phone": "+15550000101", "username": "alice", "first_name": "Alice"},
			{"phone": "+15550000102", "username": "bob", "first_name": "Bob"},
			{"phone": "+15550000103", "username": "carol", "first_name": "Carol"},
		},
		"destination": map[string]any{"title": "Hoard Archive", "username": "hoardarchive"},
		"channels": []map[string]any{
			{"title": "Mammoth Factory [Completed] 🦣", "username": "mammothfactory", "joined": true, "category": "STL", "posts": mammothPosts},
			{"title": "Dragon Forge (Paid)", "username": "dragonforge", "joined": true, "protected": true, "category": "Fantasy", "posts": forgePosts},
			{"title": "STL Emporium", "invite": "EmporiumDemo", "joined": true, "forum": true, "category": "STL",
				"posts": []map[string]any{{"file": "files/Terrain Rules.pdf", "caption": "Read me first"}},
				"topics": []map[string]any{
					{"title": "Dragons", "posts": []map[string]any{{"file": "files/Dragon Wings.zip", "caption": "Dragon wings", "dc": 4}}},
					{"title": "Terrain", "posts": []map[string]any{{"file": "files/Castle Walls.zip"}}},
					{"title": "Workshop", "posts": []map[string]any{{"file": "files/Temple Vase.obj", "caption": "A vase, as OBJ"},
						{"file": "files/Crystal Gem.3mf", "caption": "A gem, as 3MF"}, {"file": "files/Ring Set.3mf", "caption": "Rings, with the slicer's thumbnail"},
						{"file": "files/Tabletop Terrain.zip", "caption": "Terrain models, no pictures"}}},
				}},
		},
	}
	data, err := json.MarshalIndent(seed, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "seed.json")
	return path, os.WriteFile(path, data, 0o644)
}

// Zip returns a ZIP archive of entries (path → content).
func Zip(entries map[string][]byte) ([]byte, error) {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, data := range entries {
		w, err := zw.Create(name)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// DioramaBulk is the name of the generated entry of "Mammoth Diorama.zip":
// a resin printer's sliced file, the kind that makes an archive gigabytes.
const DioramaBulk = "Mammoth Diorama/Sliced/Mammoth Diorama - 8K resin.ctb"

// writeDiorama writes the small files of "Mammoth Diorama.zip" under
// files/Mammoth Diorama and returns the seed's "zip" object for it: the
// emulator generates the 2.1 GiB archive from them on the fly (a real ZIP
// whose bulk is one stored entry of generated bytes, DioramaBulk).
func writeDiorama(files string) (map[string]any, error) {
	dir := filepath.Join(files, "Mammoth Diorama")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	parts := []struct {
		entry, file string
		data        []byte
	}{
		{"Mammoth Diorama/preview.jpg", "preview.jpg", Picture(models.Diorama(), 640)},
		{"Mammoth Diorama/STL/diorama.stl", "diorama.stl", models.Diorama().BinarySTL()},
		{"Mammoth Diorama/STL/mammoth.stl", "mammoth.stl", models.Mammoth().BinarySTL()},
		{"Mammoth Diorama/Painting guide.pdf", "guide.pdf", PDF("Mammoth Diorama: painting guide")},
	}
	var entries []map[string]any
	for _, p := range parts {
		if err := os.WriteFile(filepath.Join(dir, p.file), p.data, 0o644); err != nil {
			return nil, err
		}
		entries = append(entries, map[string]any{"name": p.entry, "file": "files/Mammoth Diorama/" + p.file})
	}
	return map[string]any{"entries": entries, "bulk": DioramaBulk}, nil
}

// Picture renders a model as the square JPEG (size pixels a side) a creator
// would post with it, so the demo's previews show what their archives
// hold. The models are fixed code: a render that fails is a bug, and
// panics.
func Picture(m models.Mesh, size int) []byte {
	stl := m.BinarySTL()
	img, err := mesh.Render(context.Background(), bytes.NewReader(stl), int64(len(stl)), mesh.FormatSTL, mesh.Options{Size: size})
	if err != nil {
		panic(fmt.Sprintf("demo: render a picture: %v", err))
	}
	return img
}

// JPEG draws a small gradient (each hue a different image); tests use it
// where any picture will do. The demo's world shows Picture's renders.
func JPEG(w, h int, hue uint8) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{hue, uint8(x * 255 / w), uint8(y * 255 / h), 255})
		}
	}
	var b bytes.Buffer
	_ = jpeg.Encode(&b, img, &jpeg.Options{Quality: 80})
	return b.Bytes()
}

// STL is a one-facet ASCII STL named after its part.
func STL(name string) []byte {
	return []byte("solid " + name + "\nfacet normal 0 0 1\n outer loop\n  vertex 0 0 0\n  vertex 1 0 0\n  vertex 0 1 0\n endloop\nendfacet\nendsolid " + name + "\n")
}

// PDF is a minimal one-page PDF with a title.
func PDF(title string) []byte {
	return []byte("%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n" +
		"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]/Contents 4 0 R>>endobj\n" +
		"4 0 obj<</Length 40>>stream\nBT /F1 12 Tf 20 100 Td (" + title + ") Tj ET\nendstream endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")
}
