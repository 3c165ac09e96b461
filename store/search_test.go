package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func TestSearchWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Dragon_Bust_v2_supported.stl", []string{"dragon", "bust", "v2", "supported", "stl"}},
		{"KnightBust 75mm", []string{"knight", "bust", "75mm"}},
		{"STLFile-Mammoth", []string{"stl", "file", "mammoth"}},
		{"  dragon   bust ", []string{"dragon", "bust"}},
		{"it's a 'test' & | ! :* (x)", []string{"it", "s", "a", "test", "x"}},
		{"Ünïcode Straße", []string{"ünïcode", "straße"}},
		{"", nil},
		{"%_", nil},
	}
	for _, tt := range tests {
		if got := store.SearchWords(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("SearchWords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// searchFixture stores a small catalog and returns the packages by name.
func searchFixture(t *testing.T, db *store.DB) map[string]*hoard.Package {
	t.Helper()
	ctx := context.Background()
	ch := mustChannel(t, db)
	other := mustChannel(t, db)
	g := &hoard.PackageGroup{Name: "Dragon set", GroupingSource: hoard.GroupManual, SourceChannelID: ch.ID}
	must(t, db.CreateGroup(ctx, g))
	specs := []struct {
		name, creator, caption string
		tags                   []string
		typ                    hoard.ArchiveType
		channel                int64
		grouped, preview       bool
	}{
		{"Dragon_Bust_v2_supported.stl", "Mammoth Factory", "", []string{"STL"}, hoard.ArchiveDocument, ch.ID, true, true},
		{"Red Dragon Pack.zip", "Other Maker", "", []string{"STL", "Dragons"}, hoard.ArchiveZIP, ch.ID, true, false},
		{"Knight Helmet.rar", "Dragonforge Studio", "", []string{"STL"}, hoard.ArchiveRAR, ch.ID, false, false},
		{"Castle Walls.7z", "Mammoth Factory", "the dragon's lair", []string{"Terrain"}, hoard.Archive7Z, other.ID, false, true},
		{"Elf Archer 100% scale.zip", "Elves Inc", "", nil, hoard.ArchiveZIP, other.ID, false, false},
		{"Drow Ranger.zip", "Elves Inc", "", nil, hoard.ArchiveZIP, other.ID, false, false},
	}
	out := map[string]*hoard.Package{}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, s := range specs {
		p := mustPackage(t, db, func(p *hoard.Package) {
			p.FileName, p.Creator, p.SourceCaption, p.Tags, p.ArchiveType, p.SourceChannelID = s.name, s.creator, s.caption, s.tags, s.typ, s.channel
			if s.preview {
				p.PreviewData = []byte{1}
			}
		})
		if s.grouped {
			must(t, db.SetPackageGroup(ctx, []int64{p.ID}, g.ID))
			p.PackageGroupID = g.ID
		}
		// Distinct creation times: later specs are newer.
		_, err := db.Tx().Exec(ctx, `UPDATE packages SET created_at = $2 WHERE id = $1`, p.ID, base.Add(time.Duration(i)*time.Hour))
		must(t, err)
		out[s.name] = p
	}
	return out
}

func names(res *store.SearchResult) []string {
	var out []string
	for _, h := range res.Hits {
		if h.Group != nil {
			out = append(out, fmt.Sprintf("group:%s(%d)", h.Group.Name, h.Group.MemberCount))
			continue
		}
		out = append(out, h.Package.FileName)
	}
	return out
}

func TestSearchPackages(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	pk := searchFixture(t, db)
	yes, no := true, false
	tests := []struct {
		name string
		q    store.SearchQuery
		mode store.SearchMode
		want []string
	}{
		{"normalised name words", store.SearchQuery{Text: "dragon bust"}, store.SearchFullText,
			[]string{"Dragon_Bust_v2_supported.stl"}},
		{"last word is a prefix", store.SearchQuery{Text: "dragon bu"}, store.SearchFullText,
			[]string{"Dragon_Bust_v2_supported.stl"}},
		{"every word is a prefix", store.SearchQuery{Text: "drag bu supp"}, store.SearchFullText,
			[]string{"Dragon_Bust_v2_supported.stl"}},
		{"name outranks creator outranks caption", store.SearchQuery{Text: "dragon"}, store.SearchFullText,
			[]string{"Red Dragon Pack.zip", "Dragon_Bust_v2_supported.stl", "Knight Helmet.rar", "Castle Walls.7z"}},
		{"creator filter", store.SearchQuery{Text: "dragon", Creator: "mammoth factory"}, store.SearchFullText,
			[]string{"Dragon_Bust_v2_supported.stl", "Castle Walls.7z"}},
		{"tags are ANDed", store.SearchQuery{Text: "dragon", Tags: []string{"STL", "Dragons"}}, store.SearchFullText,
			[]string{"Red Dragon Pack.zip"}},
		{"archive type", store.SearchQuery{Text: "dragon", ArchiveType: hoard.ArchiveRAR}, store.SearchFullText,
			[]string{"Knight Helmet.rar"}},
		{"channel", store.SearchQuery{Text: "dragon", ChannelID: pk["Castle Walls.7z"].SourceChannelID}, store.SearchFullText,
			[]string{"Castle Walls.7z"}},
		{"ungrouped only", store.SearchQuery{Text: "dragon", Grouped: &no}, store.SearchFullText,
			[]string{"Knight Helmet.rar", "Castle Walls.7z"}},
		{"grouped only", store.SearchQuery{Text: "dragon", Grouped: &yes}, store.SearchFullText,
			[]string{"Red Dragon Pack.zip", "Dragon_Bust_v2_supported.stl"}},
		{"has preview", store.SearchQuery{Text: "dragon", HasPreview: &yes}, store.SearchFullText,
			[]string{"Dragon_Bust_v2_supported.stl", "Castle Walls.7z"}},
		{"group rows collapse a group", store.SearchQuery{Text: "dragon", GroupRows: true}, store.SearchFullText,
			[]string{"group:Dragon set(2)", "Knight Helmet.rar", "Castle Walls.7z"}},
		{"two characters inside words of names, newest first", store.SearchQuery{Text: "dr"}, store.SearchShort,
			[]string{"Drow Ranger.zip", "Red Dragon Pack.zip", "Dragon_Bust_v2_supported.stl"}},
		{"substring inside a word when full-text finds nothing", store.SearchQuery{Text: "agon"}, store.SearchSubstring,
			[]string{"Red Dragon Pack.zip", "Dragon_Bust_v2_supported.stl"}},
		{"numbers are words", store.SearchQuery{Text: "100"}, store.SearchFullText,
			[]string{"Elf Archer 100% scale.zip"}},
		{"LIKE wildcards match literally", store.SearchQuery{Text: "0% sc"}, store.SearchSubstring,
			[]string{"Elf Archer 100% scale.zip"}},
		{"underscore is no wildcard", store.SearchQuery{Text: "n_Bu"}, store.SearchSubstring,
			[]string{"Dragon_Bust_v2_supported.stl"}},
		{"stop words only fall back to substring", store.SearchQuery{Text: "the"}, store.SearchSubstring, nil},
		{"no text lists newest", store.SearchQuery{Limit: 2}, store.SearchRecent, []string{"Drow Ranger.zip", "Elf Archer 100% scale.zip"}},
		{"no text, group rows", store.SearchQuery{GroupRows: true}, store.SearchRecent,
			[]string{"Drow Ranger.zip", "Elf Archer 100% scale.zip", "Castle Walls.7z", "Knight Helmet.rar", "group:Dragon set(2)"}},
		{"nothing matches", store.SearchQuery{Text: "zzzqqq"}, store.SearchSubstring, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := db.SearchPackages(ctx, tt.q)
			must(t, err)
			if res.Mode != tt.mode || !slices.Equal(names(res), tt.want) {
				t.Fatalf("mode %s, hits %q; want mode %s, hits %q", res.Mode, names(res), tt.mode, tt.want)
			}
		})
	}
}

// pagedAndWhole runs q page by page, one hit a page and at most pages
// pages, and in one page of 100, and returns the rows of each as rows
// renders them.
func pagedAndWhole(t *testing.T, db *store.DB, q store.SearchQuery, pages int, rows func(*store.SearchResult) []string) (paged, whole []string) {
	t.Helper()
	ctx := context.Background()
	all := q
	all.Limit = 100
	res, err := db.SearchPackages(ctx, all)
	must(t, err)
	whole = rows(res)
	page := q
	page.Limit = 1
	for range pages {
		res, err := db.SearchPackages(ctx, page)
		must(t, err)
		paged = append(paged, rows(res)...)
		if res.Next == nil {
			break
		}
		page.After = res.Next
	}
	return paged, whole
}

// TestSearchPagination walks every shape page by page and checks that the
// pages together are exactly the single-page result.
func TestSearchPagination(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	searchFixture(t, db)
	for _, q := range []store.SearchQuery{
		{Text: "dragon"}, {Text: "dragon", GroupRows: true}, {Text: "dr"}, {Text: "dr", GroupRows: true},
		{Text: "agon"}, {}, {GroupRows: true}, {Text: "dragon", Sort: store.SortName}, {Text: "dragon", Sort: store.SortSize},
		{Sort: store.SortName}, {Sort: store.SortSize, GroupRows: true}, {Text: "r", Sort: store.SortName}, {Text: "dr", Sort: store.SortNewest},
		{Text: "dragon", Sort: store.SortNewest, GroupRows: true},
	} {
		paged, whole := pagedAndWhole(t, db, q, 20, names)
		if !slices.Equal(paged, whole) {
			t.Errorf("%+v: pages %q, whole %q", q, paged, whole)
		}
	}
}

func TestSearchPackageFiles(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	a := mustPackage(t, db)
	b := mustPackage(t, db)
	must(t, db.ReplacePackageFiles(ctx, a.ID, []hoard.PackageFile{{Path: "Dragon/body.stl"}, {Path: "Dragon/wings.stl"}, {Path: "readme.txt"}}))
	must(t, db.ReplacePackageFiles(ctx, b.ID, []hoard.PackageFile{{Path: "Knight/dragon_slayer.stl"}}))
	hits, next, err := db.SearchPackageFiles(ctx, "DRAGON", 0, 10)
	must(t, err)
	// fileHit is what the test asks of a hit: whose it is and how many
	// of its files match.
	type fileHit struct{ Package, Matched int64 }
	summarize := func(hits []store.FileSearchHit) []fileHit {
		var out []fileHit
		for _, h := range hits {
			out = append(out, fileHit{h.Package.ID, int64(h.MatchedFiles)})
		}
		return out
	}
	if diff := cmp.Diff([]fileHit{{b.ID, 1}, {a.ID, 2}}, summarize(hits)); diff != "" || next != 0 {
		t.Fatalf("hits (-want +got):\n%s\nnext %d, want 0", diff, next)
	}
	hits, next, err = db.SearchPackageFiles(ctx, "dragon", 0, 1)
	must(t, err)
	if len(hits) != 1 || next != b.ID {
		t.Fatalf("first page = %+v, next %d", hits, next)
	}
	hits, next, err = db.SearchPackageFiles(ctx, "dragon", next, 1)
	must(t, err)
	if len(hits) != 1 || hits[0].Package.ID != a.ID || next != 0 {
		t.Fatalf("second page = %+v, next %d", hits, next)
	}
	_, _, err = db.SearchPackageFiles(ctx, "dr", 0, 10)
	wantCode(t, err, hoard.EINVALID)
}

// TestSearchCappedRankingAndNewest: more matches than the ranked candidate
// set report Capped, and sorting by newest pages through every match.
func TestSearchCappedRankingAndNewest(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	const n = 230
	if _, err := db.Tx().Exec(ctx, `INSERT INTO packages (file_name, file_size, archive_type, created_at)
		SELECT 'Wyvern Pack ' || i || '.zip', i, 'ZIP', '2024-01-01'::timestamptz + i * interval '1 minute'
		FROM generate_series(1, $1) i`, n); err != nil {
		t.Fatal(err)
	}
	res, err := db.SearchPackages(ctx, store.SearchQuery{Text: "wyvern", Limit: 50})
	must(t, err)
	if !res.Capped || res.Mode != store.SearchFullText {
		t.Fatalf("ranked search over %d matches: capped=%v mode=%s", n, res.Capped, res.Mode)
	}
	seen := map[int64]bool{}
	q := store.SearchQuery{Text: "wyvern", Sort: store.SortNewest, Limit: 100}
	var prev time.Time
	for page := 0; page < 10; page++ {
		res, err := db.SearchPackages(ctx, q)
		must(t, err)
		if res.Mode != store.SearchFullTextNewest || res.Capped {
			t.Fatalf("newest: mode %s capped %v", res.Mode, res.Capped)
		}
		for _, h := range res.Hits {
			if !prev.IsZero() && h.Package.CreatedAt.After(prev) {
				t.Fatal("not newest first")
			}
			prev = h.Package.CreatedAt
			seen[h.Package.ID] = true
		}
		if res.Next == nil {
			break
		}
		q.After = res.Next
	}
	if len(seen) != n {
		t.Fatalf("newest-first pages covered %d of %d matches", len(seen), n)
	}
}

// TestSearchCommonWordsWithFilterWalkTheFilterIndex: above commonMatches
// estimated matches a creator-filtered search walks the creator's packages;
// the results must be the same as the filtered ranking would give.
func TestSearchCommonWordsWithFilterWalkTheFilterIndex(t *testing.T) {
	db := storetest.NewDB(t) // ANALYZE must see committed rows
	ctx := context.Background()
	if _, err := db.Pool().Exec(ctx, `INSERT INTO packages (file_name, file_size, archive_type, creator, created_at)
		SELECT 'Basilisk ' || CASE WHEN i % 3 = 0 THEN 'Lair ' ELSE '' END || i || '.zip', i, 'ZIP',
		       CASE WHEN i % 10 = 0 THEN 'Rare Maker' ELSE 'Big Maker' END, '2024-01-01'::timestamptz + i * interval '1 minute'
		FROM generate_series(1, 9000) i`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `ANALYZE packages`); err != nil {
		t.Fatal(err)
	}
	var plan string
	if err := db.Pool().QueryRow(ctx, `EXPLAIN (FORMAT JSON) SELECT 1 FROM packages WHERE search_vector @@ to_tsquery('english', 'basilisk')`).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, `"Plan Rows": 9`) { // the estimate is above commonMatches (5000)
		t.Fatalf("estimate too small to take the filter path: %q", plan)
	}
	res, err := db.SearchPackages(ctx, store.SearchQuery{Text: "basilisk", Creator: "rare maker", Limit: 500})
	must(t, err)
	// 900 packages by Rare Maker; the newest 200 are ranked, all of them his.
	if len(res.Hits) != 200 || !res.Capped {
		t.Fatalf("%d hits, capped %v", len(res.Hits), res.Capped)
	}
	for _, h := range res.Hits {
		if h.Package.Creator != "Rare Maker" || h.Package.SourcePostedAt.IsZero() && h.Package.CreatedAt.Before(time.Date(2024, 1, 4, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("hit %q by %q (%s) is not among the newest of the creator", h.Package.FileName, h.Package.Creator, h.Package.CreatedAt)
		}
	}
	lair, err := db.SearchPackages(ctx, store.SearchQuery{Text: "basilisk lair", Creator: "rare maker", Limit: 500})
	must(t, err)
	for _, h := range lair.Hits {
		if h.Package.Creator != "Rare Maker" || !strings.Contains(h.Package.FileName, "Lair") {
			t.Fatalf("hit %q by %q does not match", h.Package.FileName, h.Package.Creator)
		}
	}
	if len(lair.Hits) != 200 {
		t.Fatalf("basilisk lair by Rare Maker: %d hits", len(lair.Hits))
	}
}
