package store_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/jackc/pgx/v5"
)

// TestCountWindows checks that each window of three ASCII letters or digits
// counts once a name, and that no window spans another character.
func TestCountWindows(t *testing.T) {
	got := store.CountWindows([]string{"abcab", "ab-cd", "éabc", "xyz xyz"})
	want := map[string]int{"abc": 2, "bca": 1, "cab": 1, "xyz": 1}
	if !maps.Equal(got, want) {
		t.Errorf("counted %v, want %v", got, want)
	}
}

// TestSubstringAsksForARareWindow checks that the substring fallback asks
// the trigram index for the text's rarest window of three characters alone
// when the sample of names says it is rare enough, and finds the same
// packages as ILIKE: not those that hold the window but not the text, and
// those that hold the text in any case.
func TestSubstringAsksForARareWindow(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	var names []string
	for i := range 70 { // 70 tokens hold "qqzv": looked up by trigrams
		names = append(names, fmt.Sprintf("Part%dqqzV Kit.zip", i))
	}
	for i := range 100 { // "qqz" without "qzv"
		names = append(names, fmt.Sprintf("Misc%dqqz Set.zip", i))
	}
	names = append(names, "Other qzv.zip", "Otherqzv2.zip", "qzvqqz.7z") // "qzv" without "qqzv"
	for _, n := range names {
		mustPackage(t, db, func(p *hoard.Package) { p.FileName = n })
	}
	tests := []struct {
		name       string
		share      int // a window alone when at most 1 sampled name in share holds it
		wantWindow bool
	}{
		{"a rare window", 2, true},          // "qzv" in 73 of 173 names
		{"no window rare enough", 3, false}, // 73 × 3 > 173
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			traced, rec := tracedDB(t, db)
			traced.SetNameSample(10, tt.share)
			rows, err := db.Pool().Query(ctx, `SELECT id FROM packages WHERE file_name ILIKE '%qqzv%' ORDER BY 1`)
			must(t, err)
			want, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			must(t, err)
			rec.start()
			// By name, so that the window is asked: newest first, the lists
			// of package_name_tokens would serve it (search_token_lists_test.go).
			res, err := traced.SearchPackages(ctx, store.SearchQuery{Text: "qqzv", Limit: 200, Sort: store.SortName})
			sent := rec.stop()
			must(t, err)
			var got []int64
			for _, h := range res.Hits {
				got = append(got, h.Package.ID)
			}
			slices.Sort(got)
			if res.Mode != store.SearchSubstring || len(want) != 70 || !slices.Equal(got, want) {
				t.Errorf("found %d packages (%s), want the %d whose names hold qqzv", len(got), res.Mode, len(want))
			}
			if g := sentArg(sent, "%qzv%"); g != tt.wantWindow {
				t.Errorf("asked for %%qzv%% alone: %v, want %v", g, tt.wantWindow)
			}
		})
	}
}

// sentArg reports whether a statement sent had the argument arg.
func sentArg(sent []sentStatement, arg string) bool {
	return slices.ContainsFunc(sent, func(s sentStatement) bool {
		return strings.Contains(fmt.Sprint(s.args...), arg)
	})
}
