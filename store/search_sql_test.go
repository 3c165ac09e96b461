package store

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of testdata/ from the code")

// TestSearchStatements compares every search shape's statement with its
// golden file, testdata/search/NAME.sql, so that a change to the SQL the
// search sends shows as a diff of that file (-update rewrites them), and
// fails on a golden file of a shape that is gone.
func TestSearchStatements(t *testing.T) {
	dir := filepath.Join("testdata", "search")
	names := searchStatementNames()
	if *updateGolden {
		old, _ := filepath.Glob(filepath.Join(dir, "*.sql"))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]bool{}
	for _, name := range names {
		file := filepath.Join(dir, name+".sql")
		want[file] = true
		got := searchStatements[name] + "\n"
		if strings.Contains(got, "<no value>") {
			t.Errorf("shape %s: a template reads what its data does not have:\n%s", name, got)
		}
		if *updateGolden {
			if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		golden, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("shape %s: %v (go test ./store -run TestSearchStatements -update writes it)", name, err)
			continue
		}
		if string(golden) != got {
			t.Errorf("shape %s differs from %s (-update rewrites it):\n%s", name, file, got)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !want[f] {
			t.Errorf("%s: no search shape %s", f, strings.TrimSuffix(filepath.Base(f), ".sql"))
		}
	}
}
