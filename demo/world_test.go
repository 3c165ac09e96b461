package demo

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/mesh"
	"github.com/hoard/hoard/messenger/emulator"
)

// TestDemoWorldArchivesAreReadable: the built-in world's seed parses and its
// archives list with hoard's own archive reader.
func TestDemoWorldArchivesAreReadable(t *testing.T) {
	dir := t.TempDir()
	seed, err := WriteWorld(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emulator.LoadSeed(seed); err != nil {
		t.Fatalf("seed: %v", err)
	}
	f := func(n string) string { return filepath.Join(dir, "files", n) }
	orc, _ := filepath.Glob(f("Orc Warband.part*.rar"))
	if len(orc) < 2 {
		t.Fatalf("the RAR set has %d volumes", len(orc))
	}
	tests := []struct {
		typ   archive.Type
		paths []string
		want  int
	}{
		{archive.ZIP, []string{f("Mammoth Factory - 2024-01.zip")}, 3},
		{archive.ZIP, []string{f("Hoard Set.zip.001"), f("Hoard Set.zip.002")}, 2},
		{archive.RAR, []string{f("Goblin Camp.rar")}, 2},
		{archive.RAR, orc, 2},
	}
	for _, tt := range tests {
		l, err := archive.List(context.Background(), tt.typ, tt.paths, archive.ListOptions{})
		files := 0
		for _, e := range l.Entries {
			if !e.IsDir {
				files++
			}
		}
		if err != nil || files != tt.want || l.Note != "" {
			t.Errorf("%v: %d files (want %d), note %q, err %v", tt.paths, files, tt.want, l.Note, err)
		}
	}
}

// TestDemoWorldModelsRender: the world's models posted on their own are
// real geometry the renderer draws (or, for Ring Set.3mf, carry the
// thumbnail it shows), so the demo's catalog shows them.
func TestDemoWorldModelsRender(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteWorld(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Dragon_Bust_v2_supported.stl", "Temple Vase.obj", "Crystal Gem.3mf", "Ring Set.3mf"} {
		data, err := os.ReadFile(filepath.Join(dir, "files", name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mesh.Thumbnail(context.Background(), bytes.NewReader(data), int64(len(data)), mesh.Detect(name), mesh.Options{Size: 64}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "files", "Ring Set.3mf"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mesh.Thumbnail3MF(context.Background(), bytes.NewReader(data), int64(len(data)), mesh.Options{Size: 64}); err != nil {
		t.Errorf("Ring Set.3mf has no readable thumbnail: %v", err)
	}
}
