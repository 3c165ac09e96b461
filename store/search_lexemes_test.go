package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/jackc/pgx/v5"
)

// TestSearchWordsAsLexemesFindWhatPrefixesFind: a search of words matched
// as the lexemes each starts finds exactly the packages that the words
// matched as prefixes find (to_tsquery of "w:* & …"), in every mode and
// order, and is sent as lexemes only where it can be: not for a stop word,
// a word the parser splits, a word that starts no lexeme or one word
// alone; a word that starts too many stays a prefix beside the others'
// lexemes.
func TestSearchWordsAsLexemesFindWhatPrefixesFind(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	names := []string{"Knight Castle.zip", "Knife Casket.zip", "Knitted Cask.zip", "Knight Bust.zip",
		"Castle Walls.zip", "Knights of the Castle.zip", "Knight's Keep.zip", "Dragon Castle.zip"}
	for i := range 40 { // 40 lexemes that start with "zq": more than a word is matched as
		names = append(names, fmt.Sprintf("zq%c%c knight.zip", 'a'+i%26, 'a'+i/26))
	}
	ch := mustChannel(t, db)
	for _, n := range names {
		mustPackage(t, db, func(p *hoard.Package) { p.FileName, p.SourceChannelID = n, ch.ID })
	}
	rec := &statements{}
	traced, err := store.Open(ctx, db.Pool().Config().ConnString(), store.Options{Tracer: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(traced.Close)
	tests := []struct {
		text    string
		lexemes bool // sent as lexemes
	}{
		{"kni cas", true},
		{"knight castle", true},
		{"knights", true},
		{"zq kni", true}, // zq stays a prefix, kni is lexemes
		{"zq knit", true},
		{"zqa zq", true}, // zqa starts two
		{"zq zq", false}, // both start too many: prefixes
		{"zqa knight", true},
		{"the knight", false},     // a stop word normalises to nothing
		{"kni nosuchword", false}, // starts no lexeme: nothing matches
	}
	for _, tt := range tests {
		for _, sort := range []store.SearchSort{store.SortRelevance, store.SortNewest, store.SortName} {
			t.Run(tt.text+"/"+string(sort), func(t *testing.T) {
				var want []int64
				rows, err := db.Pool().Query(ctx, `SELECT id FROM packages WHERE search_vector @@ to_tsquery('english', $1) ORDER BY id`,
					store.PrefixQuery(store.SearchWords(tt.text)))
				if err != nil {
					t.Fatal(err)
				}
				if want, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
					t.Fatal(err)
				}
				rec.start()
				res, err := traced.SearchPackages(ctx, store.SearchQuery{Text: tt.text, Sort: sort, Limit: 100})
				sent := rec.stop()
				if err != nil {
					t.Fatal(err)
				}
				var got []int64
				for _, h := range res.Hits {
					got = append(got, h.Package.ID)
				}
				slices.Sort(got)
				if len(want) == 0 && res.Mode == store.SearchSubstring {
					got = nil // nothing matched the words: the substring fallback answered
				}
				if len(want) == 0 {
					want = nil
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("packages (-prefixes +search):\n%s", diff)
				}
				asLexemes := slices.ContainsFunc(sent, func(s sentStatement) bool { return strings.Contains(s.sql, "p.search_vector @@ @match_lexemes") })
				wantLexemes := tt.lexemes && len(store.SearchWords(tt.text)) > 1 // one word stays a prefix
				if asLexemes != wantLexemes {
					t.Errorf("sent as lexemes: %v, want %v", asLexemes, wantLexemes)
				}
			})
		}
	}
}
