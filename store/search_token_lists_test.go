package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/jackc/pgx/v5"
)

// TestSubstringReadsTokenLists checks that a fragment inside names is found
// through the lists of package_name_tokens where they serve the search
// (newest first, no filter but one creator, no group rows, four ASCII
// letters or digits or more) and through the names' indexes otherwise, and that either way every
// page holds the packages ILIKE finds, newest first, each once: in any
// case, in names that hold it in two tokens, and in a token too long to
// list only when the name holds it.
func TestSubstringReadsTokenLists(t *testing.T) {
	db := storetest.NewDB(t)
	long := strings.Repeat("x", 101)
	names := []string{
		"DragonBrood Bust.zip", "dragonbrood-dragonbreath.zip", "Red DRAGONBREW 32mm.7z", "Wyrm " + long + "ragonbx.zip",
		"Wyrm " + long + ".zip", "Dragon Bust.zip", "ragon.zip", "Nothing here.rar",
	}
	for i := range 12 { // more tokens than a page
		names = append(names, fmt.Sprintf("Kit%dragonb%d.stl", i, i))
	}
	for i, n := range names {
		mustPackage(t, db, func(p *hoard.Package) {
			p.FileName, p.Creator = n, []string{"Maker", "Makers Guild"}[i%3/2] // a third by the guild
			if strings.HasSuffix(n, ".7z") {
				p.ArchiveType = hoard.Archive7Z
			}
		})
	}
	tests := []struct {
		name  string
		q     store.SearchQuery
		lists bool // read from package_name_tokens
	}{
		{"newest first", store.SearchQuery{Text: "RAGONB"}, true},
		{"sorted by newest", store.SearchQuery{Text: "ragonbr", Sort: store.SortNewest}, true},
		{"a fragment of one token", store.SearchQuery{Text: "onbrew"}, true},
		{"by name", store.SearchQuery{Text: "ragonb", Sort: store.SortName}, false},
		{"one creator", store.SearchQuery{Text: "ragonb", Creator: "makers"}, true},
		{"the other creator", store.SearchQuery{Text: "ragonb", Creator: "Maker", WholeNames: true}, true},
		{"two creators", store.SearchQuery{Text: "ragonb", Creator: "mak"}, false},
		{"of one archive type", store.SearchQuery{Text: "ragonb", ArchiveType: hoard.Archive7Z}, false},
		{"with group rows", store.SearchQuery{Text: "ragonb", GroupRows: true}, false},
		{"three characters", store.SearchQuery{Text: "onb"}, false},
		{"no name holds it", store.SearchQuery{Text: "ragonbzz"}, true}, // but a token too long to list may
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			traced, rec := tracedDB(t, db)
			want := namesHolding(t, db, tt.q)
			for _, limit := range []int{3, 100} {
				q := tt.q
				q.Limit = limit
				rec.start()
				got := searchEveryPage(t, traced, q)
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("pages of %d: the names found differ from ILIKE's (-want +got):\n%s", limit, diff)
				}
				if used := sentWith(rec.stop(), "package_name_tokens"); used != tt.lists {
					t.Errorf("pages of %d: read package_name_tokens %v, want %v", limit, used, tt.lists)
				}
			}
		})
	}
}

// namesHolding lists the names of the packages whose names hold q.Text
// (ILIKE), filtered as q filters (a prefix of creators' names, or with
// WholeNames a name; an archive type) and in q's order.
func namesHolding(t *testing.T, db *store.DB, q store.SearchQuery) []string {
	t.Helper()
	order := "created_at DESC, id DESC"
	if q.Sort == store.SortName {
		order = "lower(file_name), id"
	}
	rows, err := db.Pool().Query(context.Background(), `SELECT file_name FROM packages
		WHERE file_name ILIKE '%' || $1 || '%' AND ($2 = '' OR lower(creator) = lower($2) OR NOT $4 AND lower(creator) LIKE lower($2) || '%')
			AND ($3 = '' OR archive_type = $3)
		ORDER BY `+order, q.Text, q.Creator, string(q.ArchiveType), q.WholeNames)
	must(t, err)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	must(t, err)
	return names
}

// searchEveryPage searches q and the pages after it, and lists the names
// of every hit in turn.
func searchEveryPage(t *testing.T, db *store.DB, q store.SearchQuery) []string {
	t.Helper()
	var names []string
	for page := 0; ; page++ {
		if page > 50 {
			t.Fatal("more than 50 pages")
		}
		res, err := db.SearchPackages(context.Background(), q)
		must(t, err)
		for _, h := range res.Hits {
			names = append(names, h.Package.FileName)
		}
		if res.Next == nil {
			return names
		}
		q.After = res.Next
	}
}

// TestTokenListsFollowTheirPackages checks that package_name_tokens follows
// every change to a package's name, date and creator, by whoever makes it:
// a renamed package is found by its new name's fragments and not its old
// one's, a package dated anew moves in the order, a deleted one is gone,
// one of another creator is found with that creator.
func TestTokenListsFollowTheirPackages(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	ids := map[string]int64{}
	for _, n := range []string{"Zorblax Alpha.zip", "Zorblax Beta.zip", "Zorblax Gamma.zip", "Quintar Delta.zip"} {
		ids[n] = mustPackage(t, db, func(p *hoard.Package) { p.FileName = n }).ID
	}
	for _, c := range []struct {
		stmt string
		id   int64
	}{
		{`UPDATE packages SET file_name = 'Quintarblax.zip' WHERE id = $1`, ids["Zorblax Gamma.zip"]},
		{`UPDATE packages SET created_at = created_at - interval '1 day' WHERE id = $1`, ids["Zorblax Alpha.zip"]},
		{`DELETE FROM packages WHERE id = $1`, ids["Zorblax Beta.zip"]},
		{`UPDATE packages SET creator = 'Newcomer' WHERE id = $1`, ids["Quintar Delta.zip"]},
	} {
		_, err := db.Pool().Exec(ctx, c.stmt, c.id)
		must(t, err)
	}
	for _, q := range []store.SearchQuery{{Text: "orblax"}, {Text: "uintar"}, {Text: "rblax"}, {Text: "uintar", Creator: "newcomer"}} {
		want := namesHolding(t, db, q)
		q.Limit = 10
		if got := searchEveryPage(t, db, q); !cmp.Equal(want, got) {
			t.Errorf("%q by %q found %q, want %q", q.Text, q.Creator, got, want)
		}
	}
	var entries, want int
	must(t, db.Pool().QueryRow(ctx, `SELECT count(*) FROM package_name_tokens`).Scan(&entries))
	must(t, db.Pool().QueryRow(ctx, `SELECT count(*) FROM packages p, unnest(hoard_listed_name_tokens(p.file_name))`).Scan(&want))
	if entries != want {
		t.Errorf("package_name_tokens holds %d entries, the packages' names %d", entries, want)
	}
}
