package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/messenger/emulator"
)

// TestDemoWorldArchivesAreReadable: the built-in world's seed parses and its
// archives list with hoard's own archive reader.
func TestDemoWorldArchivesAreReadable(t *testing.T) {
	dir := t.TempDir()
	seed, err := writeDemoWorld(dir)
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
