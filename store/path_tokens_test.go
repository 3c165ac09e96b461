package store_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/jackc/pgx/v5"
)

// TestPathTokensFollowTheChunks checks that each chunk of package_paths
// lists the tokens of its lower-cased paths (runs of ASCII letters and
// digits; one longer than 100 characters as ""), that path_tokens lists
// every token the chunks have held ("" too), by ReplacePackageFiles or any other
// statement, and that a reset of the catalog's files empties it.
func TestPathTokensFollowTheChunks(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	p := mustPackage(t, db)
	long := strings.Repeat("ab", 51) // 102 characters
	must(t, db.ReplacePackageFiles(ctx, p.ID, []hoard.PackageFile{
		{Path: "Karavel/Hull_01.STL"}, {Path: "Drachenköpfe/" + long + ".stl"}, {Path: "karavel/mast.stl"}}))
	type state struct {
		Chunk, Listed []string
	}
	read := func() state {
		t.Helper()
		var s state
		must(t, db.Pool().QueryRow(ctx, `SELECT coalesce((SELECT tokens FROM package_paths WHERE package_id = $1), '{}'),
			ARRAY(SELECT token FROM path_tokens ORDER BY token)`, p.ID).Scan(&s.Chunk, &s.Listed))
		return s
	}
	steps := []struct {
		name string
		do   func()
		want state
	}{
		{"a listing", func() {}, state{[]string{"", "01", "drachenk", "hull", "karavel", "mast", "pfe", "stl"},
			[]string{"", "01", "drachenk", "hull", "karavel", "mast", "pfe", "stl"}}},
		{"an entry renamed by hand", func() {
			_, err := db.Pool().Exec(ctx, `UPDATE package_files SET path = 'Cog/Sail.stl' WHERE package_id = $1 AND ordinal = 2`, p.ID)
			must(t, err)
		}, state{[]string{"", "01", "cog", "drachenk", "hull", "karavel", "pfe", "sail", "stl"},
			[]string{"", "01", "cog", "drachenk", "hull", "karavel", "mast", "pfe", "sail", "stl"}}},
		{"a reset of the files", func() {
			_, err := db.Pool().Exec(ctx, `TRUNCATE package_files`)
			must(t, err)
		}, state{[]string{}, []string{}}},
	}
	for _, s := range steps {
		s.do()
		if got := read(); !reflect.DeepEqual(got, s.want) {
			t.Fatalf("after %s: %+v, want %+v", s.name, got, s.want)
		}
	}
}

// TestSearchLooksPathsUpByTokens checks that a search's text of ASCII
// letters and digits is looked up in the paths by the tokens that hold it
// and finds exactly the packages whose paths hold it (as LIKE finds them):
// inside a token, at its start, in any case, beside other characters,
// inside a token too long to list; that another text, or one that more
// than 64 tokens hold, is looked up by trigrams, with the same result.
func TestSearchLooksPathsUpByTokens(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	listings := [][]string{
		{"Karavel/Body_01.STL", "Karavel/Sail.stl"},
		{"ships/karavella_hull.stl"},
		{"Mixed/Ravel99.stl"},
		{"Long/" + strings.Repeat("ab", 60) + "dragonfly.stl"},
		{"Drachenköpfe/kopf.stl"},
		{"Parts/arm_left_07.stl"},
		{"Parts/left_leg.stl"},
	}
	for i := range 70 { // 70 tokens that hold "qqx"
		listings = append(listings, []string{fmt.Sprintf("bits/a%dqqx.stl", i)})
	}
	for i, files := range listings {
		p := mustPackage(t, db, func(p *hoard.Package) {
			p.FileName, p.Creator = fmt.Sprintf("Box %d.zip", i), []string{"Stone Works", "Other Hands"}[i%2]
		})
		var list []hoard.PackageFile
		for _, f := range files {
			list = append(list, hoard.PackageFile{Path: f})
		}
		must(t, db.ReplacePackageFiles(ctx, p.ID, list))
	}
	traced, rec := tracedDB(t, db)
	type lookup struct {
		Found    int
		ByTokens bool
	}
	tests := []struct {
		text, creator string
		want          lookup
	}{
		{"ravel", "", lookup{3, true}},     // inside karavel, karavella, ravel99
		{"KARAVEL", "", lookup{2, true}},   // any case
		{"dragonfly", "", lookup{1, true}}, // inside a token of 129 characters
		{"drachenk", "", lookup{1, true}},  // before a letter that is not ASCII
		{"köpfe", "", lookup{1, false}},
		{"arm_left", "", lookup{1, false}},
		{"left", "", lookup{2, true}},
		{"body", "", lookup{1, true}},
		{"qqx", "", lookup{70, false}}, // more than 64 tokens hold it
		{"nowhere", "", lookup{0, true}},
		{"ravel", "Stone Works", lookup{2, true}}, // a creator's
		{"left", "other hands", lookup{1, true}},
		{"qqx", "Other Hands", lookup{35, false}},
	}
	for _, tt := range tests {
		t.Run(tt.text+"/"+tt.creator, func(t *testing.T) {
			rows, err := db.Pool().Query(ctx, `SELECT DISTINCT package_id FROM package_paths WHERE paths LIKE '%' || lower($1) || '%'
				AND ($2 = '' OR creator = lower($2)) ORDER BY 1`, tt.text, tt.creator)
			must(t, err)
			want, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			must(t, err)
			rec.start()
			res, err := traced.SearchPackages(ctx, store.SearchQuery{Text: tt.text, Creator: tt.creator, WholeNames: true, Limit: 200})
			sent := rec.stop()
			must(t, err)
			var got []int64
			if res.Mode != store.SearchSubstring {
				for _, h := range res.Hits {
					got = append(got, h.Package.ID)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("found %v, want %v (the packages whose paths hold it)", got, want)
			}
			byTokens := sentWith(sent, ".tokens && @path_tokens")
			if g := (lookup{len(got), byTokens}); g != tt.want {
				t.Errorf("looked up %+v, want %+v", g, tt.want)
			}
		})
	}
}

// TestNameTokensFollowTheNames checks that name_tokens lists every token
// the packages' lower-cased names have held, from new packages and renames
// by any statement, and that a reset of the catalog empties it.
func TestNameTokensFollowTheNames(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	p := mustPackage(t, db, func(p *hoard.Package) { p.FileName = "DragonBust 34mm.zip" })
	listed := func() []string {
		t.Helper()
		var tokens []string
		must(t, db.Pool().QueryRow(ctx, `SELECT ARRAY(SELECT token FROM name_tokens ORDER BY token)`).Scan(&tokens))
		return tokens
	}
	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"a package", func() {}, []string{"34mm", "dragonbust", "zip"}},
		{"a renamed package", func() {
			_, err := db.Pool().Exec(ctx, `UPDATE packages SET file_name = 'Wyrm_Köpfe v2.7z' WHERE id = $1`, p.ID)
			must(t, err)
		}, []string{"34mm", "7z", "dragonbust", "k", "pfe", "v2", "wyrm", "zip"}},
		{"another package of the same tokens", func() { mustPackage(t, db, func(p *hoard.Package) { p.FileName = "Wyrm v2.zip" }) },
			[]string{"34mm", "7z", "dragonbust", "k", "pfe", "v2", "wyrm", "zip"}},
		{"a reset of the catalog", func() {
			_, err := db.Pool().Exec(ctx, `TRUNCATE packages CASCADE`)
			must(t, err)
		}, []string{}},
	}
	for _, s := range steps {
		s.do()
		if got := listed(); !reflect.DeepEqual(got, s.want) {
			t.Fatalf("after %s: name_tokens = %v, want %v", s.name, got, s.want)
		}
	}
}

// TestSearchLooksNamesUpByTokens checks that the substring fallback looks a
// text of ASCII letters and digits up by the tokens of names that hold it
// and finds exactly the packages whose names hold it whatever the case (as
// ILIKE finds them): inside a token, beside other characters, inside a
// token too long to list; and that another text, or one that more than 64
// tokens hold, is looked up by ILIKE, with the same result. By name, the
// names' index of tokens is asked; newest first, the lists of
// package_name_tokens (search_token_lists_test.go).
func TestSearchLooksNamesUpByTokens(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	names := []string{"DragonBust 34mm.zip", "Big DRAGONBUSTER.7z", "Wyrm_dragonbust_v2.zip",
		strings.Repeat("xy", 55) + "gonbuq.zip", "Drachenköpfe Set.zip", "Goblin Camp.zip"}
	for i := range 70 { // 70 tokens that hold "qqz"
		names = append(names, fmt.Sprintf("Part%dqqz Kit.zip", i))
	}
	for _, n := range names {
		mustPackage(t, db, func(p *hoard.Package) { p.FileName = n })
	}
	traced, rec := tracedDB(t, db)
	type lookup struct {
		Found    int
		ByTokens bool
	}
	tests := []struct {
		text string
		want lookup
	}{
		{"agonbu", lookup{3, true}},
		{"GONBUST", lookup{3, true}}, // any case
		{"onbuq", lookup{1, true}},   // inside a token of 125 characters
		{"achenk", lookup{1, true}},  // before a letter that is not ASCII
		{"chenkö", lookup{1, false}},
		{"qqz", lookup{70, false}}, // more than 64 tokens hold it
		{"gonbux", lookup{0, true}},
	}
	for _, tt := range tests {
		for _, sort := range []store.SearchSort{store.SortRelevance, store.SortName} {
			t.Run(tt.text+" by "+string(sort), func(t *testing.T) {
				rows, err := db.Pool().Query(ctx, `SELECT id FROM packages WHERE file_name ILIKE '%' || $1 || '%' ORDER BY 1`, tt.text)
				must(t, err)
				want, err := pgx.CollectRows(rows, pgx.RowTo[int64])
				must(t, err)
				rec.start()
				res, err := traced.SearchPackages(ctx, store.SearchQuery{Text: tt.text, Limit: 200, Sort: sort})
				sent := rec.stop()
				must(t, err)
				var got []int64
				for _, h := range res.Hits {
					got = append(got, h.Package.ID)
				}
				slices.Sort(got)
				if res.Mode != store.SearchSubstring || !slices.Equal(got, want) {
					t.Errorf("found %v (%s), want %v (the packages whose names hold it, by the substring)", got, res.Mode, want)
				}
				byTokens := sentWith(sent, "file_name)) && @name_tokens")
				if sort == store.SortRelevance {
					byTokens = sentWith(sent, "FROM package_name_tokens")
				}
				if g := (lookup{len(got), byTokens}); g != tt.want {
					t.Errorf("looked up %+v, want %+v", g, tt.want)
				}
			})
		}
	}
}

// TestSearchLooksNothingUpThatNoTokenHolds: a text of ASCII letters and
// digits that no token of the paths (or of the names) holds is in no path
// (no name), so the search sends no lookup for it, until a path (a name)
// with a token too long to list makes one necessary, which then finds it.
func TestSearchLooksNothingUpThatNoTokenHolds(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	traced, rec := tracedDB(t, db)
	add := func(name, path string) func() {
		return func() {
			p := mustPackage(t, db, func(p *hoard.Package) { p.FileName = name })
			must(t, db.ReplacePackageFiles(ctx, p.ID, []hoard.PackageFile{{Path: path}}))
		}
	}
	long := strings.Repeat("ab", 55)
	type sent struct {
		Hits                     int
		Mode                     store.SearchMode
		PathsLooked, NamesLooked bool
	}
	steps := []struct {
		name string
		do   func()
		text string
		want sent
	}{
		{"short tokens only", add("Goblin Camp.zip", "goblin/camp.stl"), "wyvernx", sent{0, store.SearchSubstring, false, false}},
		{"a path of a long token", add("Box.zip", "parts/"+long+"wyvernx.stl"), "wyvernx", sent{1, store.SearchFullText, true, false}},
		{"a name of short tokens", func() {}, "qwyrmz", sent{0, store.SearchSubstring, true, false}},
		{"a name of a long token", add(long+"qwyrmz.zip", "x.stl"), "qwyrmz", sent{1, store.SearchSubstring, true, true}},
	}
	for _, s := range steps {
		s.do()
		rec.start()
		res, err := traced.SearchPackages(ctx, store.SearchQuery{Text: s.text})
		statements := rec.stop()
		must(t, err)
		names := sentWith(statements, "@name_tokens") || sentWith(statements, "FROM package_name_tokens")
		got := sent{len(res.Hits), res.Mode, sentWith(statements, "FROM package_paths"), names}
		if got != s.want {
			t.Errorf("after %s, %q: %+v, want %+v", s.name, s.text, got, s.want)
		}
	}
}
