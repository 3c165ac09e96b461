package store

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
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
		got := searchStatements[name].sql + "\n"
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

// TestSearchStatementText cuts a statement's optional conditions of the
// arguments left unbound, and only those.
func TestSearchStatementText(t *testing.T) {
	const sql = `SELECT 1 WHERE (@a::text IS NULL OR x = ')' OR (y AND (@b::int[] IS NULL OR z))) AND (@c::bool IS NOT TRUE OR w IS NOT NULL) AND (@d::bool IS NOT FALSE OR v)`
	st := newSearchStatement("test", sql)
	tests := []struct {
		name string
		args pgx.NamedArgs
		want string
	}{
		{"all bound", pgx.NamedArgs{"a": "x", "b": []int{1}, "c": true, "d": false}, sql},
		{"none bound", nil, `SELECT 1 WHERE TRUE AND TRUE AND TRUE`},
		{"nil is unbound", pgx.NamedArgs{"a": nil, "b": []int{1}, "c": nil, "d": true}, `SELECT 1 WHERE TRUE AND TRUE AND (@d::bool IS NOT FALSE OR v)`},
		{"inner cut in a kept one", pgx.NamedArgs{"a": "x", "c": true, "d": true},
			`SELECT 1 WHERE (@a::text IS NULL OR x = ')' OR (y AND TRUE)) AND (@c::bool IS NOT TRUE OR w IS NOT NULL) AND (@d::bool IS NOT FALSE OR v)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := st.text(tt.args); got != tt.want {
				t.Errorf("text:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestSearchStatementBranches cuts the optional branches of the arguments
// left unbound, whole, and the optional conditions inside a branch with it.
func TestSearchStatementBranches(t *testing.T) {
	const sql = `SELECT x FROM ((SELECT @w_0::text AS x)
	UNION ALL (/*if @w_1*/SELECT @w_1::text WHERE (@f::text IS NULL OR @w_1 <> ')'))
	UNION ALL (/*if @w_2*/SELECT @w_2::text)) u WHERE (@f::text IS NULL OR x = @f)`
	st := newSearchStatement("test", sql)
	tests := []struct {
		name string
		args pgx.NamedArgs
		want string
	}{
		{"all bound", pgx.NamedArgs{"w_0": "a", "w_1": "b", "w_2": "c", "f": "a"}, sql},
		{"one lexeme", pgx.NamedArgs{"w_0": "a"}, `SELECT x FROM ((SELECT @w_0::text AS x)) u WHERE TRUE`},
		{"two, the condition inside cut", pgx.NamedArgs{"w_0": "a", "w_1": "b"}, `SELECT x FROM ((SELECT @w_0::text AS x)
	UNION ALL (/*if @w_1*/SELECT @w_1::text WHERE TRUE)) u WHERE TRUE`},
		{"a branch between others", pgx.NamedArgs{"w_0": "a", "w_2": "c", "f": "a"}, `SELECT x FROM ((SELECT @w_0::text AS x)
	UNION ALL (/*if @w_2*/SELECT @w_2::text)) u WHERE (@f::text IS NULL OR x = @f)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := st.text(tt.args); got != tt.want {
				t.Errorf("text:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestSearchStatementsCutWhole checks every shape: bound arguments keep
// the whole statement, and none leave no optional condition behind.
func TestSearchStatementsCutWhole(t *testing.T) {
	for _, name := range searchStatementNames() {
		st := searchStatements[name]
		all := pgx.NamedArgs{}
		for _, term := range st.terms {
			all[term.arg] = true
		}
		if got := st.text(all); got != st.sql {
			t.Errorf("shape %s with every argument bound differs from its whole statement:\n%s", name, got)
		}
		if got := st.text(nil); optionalTermStart.MatchString(got) || optionalBranchStart.MatchString(got) {
			t.Errorf("shape %s without arguments keeps an optional condition or branch:\n%s", name, got)
		}
	}
}
