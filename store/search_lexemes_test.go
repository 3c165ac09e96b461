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
// order, alone and with a creator, and is sent as lexemes only where it
// can be: not for a stop word, a word the parser splits, a word that
// starts no lexeme or one word alone; a word that starts too many stays a
// prefix beside the others' lexemes. Where two words start at most
// maxPairLexemes together and the rest at most maxWordLexemes, the ranked
// orders meet the two words' lists in package_words (pair: those of the
// fewest lexemes, each word's lexemes' lists merged) and test the rest on
// what they find; where one word starts one lexeme and no pair can be
// met, they read its list and test the words on each package (lead).
func TestSearchWordsAsLexemesFindWhatPrefixesFind(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	names := []string{"Knight Castle.zip", "Knife Casket.zip", "Knitted Cask.zip", "Knight Bust.zip",
		"Castle Walls.zip", "Knights of the Castle.zip", "Knight's Keep.zip", "Dragon Castle.zip",
		"Knight Castle Walls.zip", "Knitted Castle Walls.zip"}
	for i := range 40 { // 40 lexemes that start with "zq": more than a word is matched as
		names = append(names, fmt.Sprintf("zq%c%c knight.zip", 'a'+i%26, 'a'+i/26))
	}
	for i := range 12 { // 12 that start with "yw": a prefix, but one side of a pair
		names = append(names, fmt.Sprintf("yw%c castle.zip", 'a'+i))
	}
	for i := range 13 { // and 13 "yv": with yw's, more than a pair reads
		names = append(names, fmt.Sprintf("yv%c yw%c.zip", 'a'+i, 'a'+i%12))
	}
	// a package that holds two lexemes of "kni" (knit, knight): once in its window
	names = append(names, "Knitted Knight Casket.zip")
	ch := mustChannel(t, db)
	for _, n := range names {
		creator := "Other Hands"
		if strings.Contains(n, "Walls") || strings.HasPrefix(n, "Knight Castle") {
			creator = "Stone Works"
		}
		mustPackage(t, db, func(p *hoard.Package) { p.FileName, p.SourceChannelID, p.Creator = n, ch.ID, creator })
	}
	rec := &statements{}
	open := func() *store.DB {
		traced, err := store.Open(ctx, db.Pool().Config().ConnString(), store.Options{Tracer: rec})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(traced.Close)
		return traced
	}
	// as the planner's estimates decide (the lists are short enough here
	// to read whole: every pair and lead), every pair, and every pair with
	// windows of 2 entries, which cut their lists before they meet often
	// enough
	tunings := []struct {
		name   string
		db     *store.DB
		window int // 0: the planner's estimates decide
	}{{"estimated", open(), 0}, {"pair", open(), 100}, {"pair_cut", open(), 2}}
	for _, tu := range tunings[1:] {
		tu.db.SetPair(tu.window)
	}
	tests := []struct {
		text    string
		lexemes bool // sent as lexemes
		pair    bool // ranked as a pair
		lead    bool // ranked by one word's lexeme
	}{
		{"kni cas", true, true, false}, // three lexemes each, each word's lists merged
		{"knight castle", true, true, false},
		{"knight castle walls", true, true, false}, // walls tested on the pair's
		{"kni castle walls", true, true, false},    // kni's three tested on castle and walls'
		{"knights", true, false, false},
		{"zq kni", true, false, false},          // zq stays a prefix, kni is lexemes
		{"zq knit", true, false, true},          // knit leads, zq a prefix
		{"zqa zq", true, false, false},          // zqa starts two
		{"zq zq", false, false, false},          // both start too many: prefixes
		{"zqa knight", true, true, false},       // knight's list meets zqa's two
		{"yw castle", true, true, false},        // yw a prefix, its twelve lists merged
		{"yw zq", false, false, false},          // one side only: prefixes
		{"yv yw", true, false, false},           // 25 lexemes together: no pair, the prefixes sent as lexemes
		{"yw kni castle", true, false, true},    // castle and kni pair, but yw's twelve cannot be tested: castle leads
		{"zq knight castle", true, false, true}, // a prefix: no pair, knight leads
		{"the knight", false, false, false},     // a stop word normalises to nothing
		{"kni nosuchword", true, false, false},  // starts no lexeme: its own matches nothing
		{"the nosuchword", true, false, false},  // so whatever the other words are
	}
	queries := []store.SearchQuery{{Sort: store.SortRelevance}, {Sort: store.SortNewest}, {Sort: store.SortName},
		{Sort: store.SortRelevance, Creator: "Stone Works"}, {Sort: store.SortName, Creator: "Stone Works"}}
	for _, tu := range tunings {
		for _, tt := range tests {
			for _, q := range queries {
				t.Run(tu.name+"/"+tt.text+"/"+string(q.Sort)+"/"+q.Creator, func(t *testing.T) {
					q.Text, q.Limit = tt.text, 100
					want := prefixMatches(t, db, q)
					got, gotWay := lexemeSearch(t, tu.db, rec, q)
					if len(want) == 0 {
						want = nil
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("packages (-prefixes +search):\n%s", diff)
					}
					ranked := q.Sort != store.SortNewest
					wantWay := sentWay{tt.lexemes && len(store.SearchWords(tt.text)) > 1, // one word stays a prefix
						tt.pair && ranked, tt.lead && ranked}
					if gotWay != wantWay {
						t.Errorf("sent as %+v, want %+v", gotWay, wantWay)
					}
				})
			}
		}
	}
}

// sentWay is how a search of words was sent: as the lexemes the words
// start, as a pair, as a lead.
type sentWay struct{ Lexemes, Pair, Lead bool }

// prefixMatches lists the packages, by id, whose search vectors match q's
// words as prefixes (and that are q's creator's, if any).
func prefixMatches(t *testing.T, db *store.DB, q store.SearchQuery) []int64 {
	t.Helper()
	rows, err := db.Pool().Query(context.Background(), `SELECT id FROM packages WHERE search_vector @@ to_tsquery('english', $1)
		AND ($2 = '' OR creator = $2) ORDER BY id`, store.PrefixQuery(store.SearchWords(q.Text)), q.Creator)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// lexemeSearch runs q through searcher, whose statements rec records, and
// returns the ids of the packages found, sorted (nil when the substring
// fallback answered: the words matched nothing), and how it was sent.
func lexemeSearch(t *testing.T, searcher *store.DB, rec *statements, q store.SearchQuery) ([]int64, sentWay) {
	t.Helper()
	rec.start()
	res, err := searcher.SearchPackages(context.Background(), q)
	sent := rec.stop()
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	if res.Mode != store.SearchSubstring {
		for _, h := range res.Hits {
			got = append(got, h.Package.ID)
		}
		slices.Sort(got)
	}
	return got, sentWay{sentWith(sent, "p.search_vector @@ @match_lexemes") || sentWith(sent, "@pair_first"), sentWith(sent, "@pair_second"),
		sentWith(sent, "JOIN packages p ON p.id = pa.package_id")}
}

// TestSearchOneWordNewestPagesPackageWords: one word listed newest first
// is read from package_words (alone and with a creator's filter), page by
// page, and the pages together are every package whose search vector
// matches the word as a prefix, newest first, as the full-text index
// lists them; a word that starts too many lexemes, and group rows, are
// listed by the full-text index, with the same result.
func TestSearchOneWordNewestPagesPackageWords(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	names := []string{"Knight Castle.zip", "Knife Casket.zip", "Knitted Knights.zip", "Knight Bust.zip",
		"Castle Walls.zip", "Knights of the Castle.zip", "Knight's Keep.zip", "Knitted Cask.zip"}
	for i := range 40 { // 40 lexemes that start with "zq": more than package_words serves
		names = append(names, fmt.Sprintf("zq%c%c knight.zip", 'a'+i%26, 'a'+i/26))
	}
	ch := mustChannel(t, db)
	for i, n := range names {
		creator := []string{"Stone Works", "Other Hands"}[i%2]
		mustPackage(t, db, func(p *hoard.Package) {
			p.FileName, p.SourceChannelID, p.Creator, p.Tags = n, ch.ID, creator, []string{"STL"}
		})
	}
	traced, rec := tracedDB(t, db)
	tests := []struct {
		q      store.SearchQuery
		served bool // by package_words
	}{
		{store.SearchQuery{Text: "kni"}, true},
		{store.SearchQuery{Text: "knights"}, true},
		{store.SearchQuery{Text: "kni", Creator: "stone"}, true},
		{store.SearchQuery{Text: "castle", Creator: "Other Hands"}, true},
		{store.SearchQuery{Text: "zq"}, false},
		{store.SearchQuery{Text: "kni", GroupRows: true}, false},
		{store.SearchQuery{Text: "kni", Tags: []string{"st"}}, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/%v", tt.q.Text, tt.q.Creator, tt.q.GroupRows), func(t *testing.T) {
			rows, err := db.Pool().Query(ctx, `SELECT id FROM packages WHERE search_vector @@ to_tsquery('english', $1)
				AND ($2 = '' OR creator ILIKE $2 || '%') ORDER BY created_at DESC, id DESC`, tt.q.Text+":*", tt.q.Creator)
			if err != nil {
				t.Fatal(err)
			}
			want, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			if err != nil {
				t.Fatal(err)
			}
			q := tt.q
			q.Sort, q.Limit = store.SortNewest, 3
			var got []int64
			served := true
			for page := 0; page < 30; page++ {
				rec.start()
				res, err := traced.SearchPackages(ctx, q)
				sent := rec.stop()
				if err != nil {
					t.Fatal(err)
				}
				served = served && sentWith(sent, "AS m(id) JOIN packages p")
				for _, h := range res.Hits {
					got = append(got, h.Package.ID)
				}
				if exact := res.Next == nil && page == 0; res.CountExact != exact || res.Count < int64(len(res.Hits)) {
					t.Errorf("page %d: count %d (exact %v) of %d hits", page, res.Count, res.CountExact, len(res.Hits))
				}
				if res.Next == nil {
					break
				}
				q.After = res.Next
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("packages newest first (-full-text +search):\n%s", diff)
			}
			if served != tt.served {
				t.Errorf("served by package_words: %v, want %v", served, tt.served)
			}
		})
	}
}
