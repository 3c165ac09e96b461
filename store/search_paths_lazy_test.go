package store_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// TestSearchLeavesPathsToThePageThatReachesThem: a ranked search whose
// word matches fill a page does not look the paths up for it (a match of
// the paths only ranks below every word match), and says its count is not
// exact; the page that reaches the end of the word matches looks them up,
// and from there the count is exact. Page by page the search shows what
// the full-text index's shapes, which look the paths up on every page,
// show. Group rows and other orders look the paths up on every page.
func TestSearchLeavesPathsToThePageThatReachesThem(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	base := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	// 30 packages named for the word (12 of them Stone Works'), 6 that
	// hold it only in a path (3 Stone Works'), 2 named for it that hold it
	// in a path too, and others.
	type spec struct {
		name, creator string
		files         []string
	}
	var specs []spec
	for i := range 30 {
		creator := []string{"Stone Works", "Other Hands", "Third Forge"}[i%5%3]
		var files []string
		if i%15 == 0 {
			files = []string{fmt.Sprintf("wyvern_%d/tail.stl", i)}
		}
		specs = append(specs, spec{fmt.Sprintf("Wyvern Roost %d.zip", i), creator, files})
		if i%5 == 0 {
			specs = append(specs, spec{fmt.Sprintf("Misc Pack %d.zip", i), []string{"Stone Works", "Other Hands"}[i/5%2],
				[]string{"parts/readme.txt", fmt.Sprintf("parts/Wyvern_wing_%d.stl", i)}})
		}
		specs = append(specs, spec{fmt.Sprintf("Goblin Camp %d.zip", i), "Stone Works", []string{"goblin/camp.stl"}})
	}
	for i, s := range specs {
		p := mustPackage(t, db, func(p *hoard.Package) { p.FileName, p.Creator = s.name, s.creator })
		if s.files != nil {
			var files []hoard.PackageFile
			for _, f := range s.files {
				files = append(files, hoard.PackageFile{Path: f})
			}
			must(t, db.ReplacePackageFiles(ctx, p.ID, files))
		}
		_, err := db.Pool().Exec(ctx, `UPDATE packages SET created_at = $2 WHERE id = $1`, p.ID, base.Add(time.Duration(i)*time.Minute))
		must(t, err)
	}
	// Two groups: Roosts A holds the six newest-named roosts 0–5 and a pack
	// that matches by its paths only, Roosts B the roosts 6–9.
	_, err := db.Pool().Exec(ctx, `WITH a AS (INSERT INTO package_groups (name) VALUES ('Roosts A') RETURNING id),
		b AS (INSERT INTO package_groups (name) VALUES ('Roosts B') RETURNING id)
		UPDATE packages SET package_group_id = CASE
			WHEN file_name ~ '^(Wyvern Roost [0-5]|Misc Pack 0)\.zip$' THEN (SELECT id FROM a)
			WHEN file_name ~ '^Wyvern Roost [6-9]\.zip$' THEN (SELECT id FROM b) END
		WHERE file_name ~ '^(Wyvern Roost [0-9]|Misc Pack 0)\.zip$'`)
	must(t, err)
	traced, rec := tracedDB(t, db)

	// page is what a page shows and whether the paths were looked up for it.
	type page struct {
		Rows        int
		PathsLooked bool
		Count       int64
		Exact       bool
	}
	tests := []struct {
		q    store.SearchQuery
		want []page
	}{
		{store.SearchQuery{Text: "wyvern", Limit: 10}, []page{
			{10, false, 30, false}, {10, false, 30, false}, {10, true, 36, true}, {6, true, 36, true}}},
		{store.SearchQuery{Text: "wyvern", Limit: 12}, []page{
			{12, false, 30, false}, {12, false, 30, false}, {12, true, 36, true}}},
		{store.SearchQuery{Text: "Wyvern", Creator: "stone works", Limit: 5}, []page{
			{5, false, 12, false}, {5, false, 12, false}, {5, true, 15, true}}},
		{store.SearchQuery{Text: "wyvern roost", Limit: 10}, []page{ // a pair: no path holds both words
			{10, false, 30, false}, {10, false, 30, false}, {10, true, 30, true}}},
		// Group rows: 20 ungrouped roosts and the two groups, then five
		// packs (the sixth is in Roosts A).
		{store.SearchQuery{Text: "wyvern", Limit: 10, GroupRows: true}, []page{
			{10, false, 22, false}, {10, false, 22, false}, {7, true, 27, true}}},
		{store.SearchQuery{Text: "wyvern", Limit: 11, GroupRows: true}, []page{
			{11, false, 22, false}, {11, true, 27, true}, {5, true, 27, true}}},
		{store.SearchQuery{Text: "wyvern", Limit: 20, Sort: store.SortName}, []page{
			{20, true, 36, true}, {16, true, 36, true}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/%d/%v/%s", tt.q.Text, tt.q.Creator, tt.q.Limit, tt.q.GroupRows, tt.q.Sort), func(t *testing.T) {
			var got []page
			var rows []string
			q := tt.q
			for range 10 {
				rec.start()
				res, err := traced.SearchPackages(ctx, q)
				sent := rec.stop()
				must(t, err)
				looked := sentWith(sent, "package_paths")
				got = append(got, page{len(res.Hits), looked, res.Count, res.CountExact})
				for _, h := range res.Hits {
					rows = append(rows, hitRow(h))
				}
				if q.After = res.Next; q.After == nil {
					break
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("pages %+v, want %+v", got, tt.want)
			}
			q = tt.q
			q.ArchiveType = hoard.ArchiveZIP // every package: the full-text index's shapes
			var want []string
			for range 10 {
				res, err := db.SearchPackages(ctx, q)
				must(t, err)
				for _, h := range res.Hits {
					want = append(want, hitRow(h))
				}
				if q.After = res.Next; q.After == nil {
					break
				}
			}
			if !reflect.DeepEqual(rows, want) {
				t.Errorf("rows\n%s\nwant (the full-text index's)\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// hitRow is a hit as TestSearchLeavesPathsToThePageThatReachesThem
// compares it: its package, rank and matched paths, and its group.
func hitRow(h store.SearchHit) string {
	row := fmt.Sprintf("%s %.4f %v", h.Package.FileName, h.Rank, h.MatchedPaths)
	if h.Group != nil {
		row += fmt.Sprintf(" group %q of %d", h.Group.Name, h.Group.MemberCount)
	}
	return row
}

// TestSearchPagesThroughPathMatches: in relevance order a page looks up
// only the packages of the paths it shows (one more for its cursor), below
// the last page's, so that page after page reaches every package whose
// paths hold the text, past the candidates' bound (rankCandidates, 200),
// after the word matches and newest first, with a creator (the walk of
// its chunks) and without, for a text of tokens and one of trigrams. A page
// that finds more than it shows says its count is about.
func TestSearchPagesThroughPathMatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewTx(t)
	// 230 packs that hold the text in a path, and amid them three nests
	// named for it, one of which holds it in a path too.
	var ids []int64
	for i := range 230 {
		if i == 115 {
			for k := range 3 {
				mustPackage(t, db, func(p *hoard.Package) { p.FileName, p.Creator = fmt.Sprintf("Wyvern Nest %d.zip", k), "Stone Works" })
			}
		}
		creator := []string{"Stone Works", "Other Hands"}[i%2]
		ids = append(ids, mustPackage(t, db, func(p *hoard.Package) { p.FileName, p.Creator = fmt.Sprintf("Part Pack %d.zip", i), creator }).ID)
	}
	execTx(t, db, `INSERT INTO package_files (package_id, ordinal, path, file_name)
		SELECT p.id, 0, CASE WHEN p.id = ANY($1) THEN 'parts/Wyvern_Tail_' || p.id || '.stl' ELSE 'nest/Wyvern_Tail_Egg.stl' END, 'x.stl'
		FROM packages p WHERE p.id = ANY($1) OR p.file_name = 'Wyvern Nest 1.zip'`, ids)
	execTx(t, db, `UPDATE packages SET file_count = 1 WHERE id = ANY($1) OR file_name = 'Wyvern Nest 1.zip'`, ids)

	type first struct {
		Rows  int
		Exact bool
		More  bool
	}
	tests := []struct {
		q       store.SearchQuery
		creator string // of the path matches, "" for any
		words   int    // the word matches that come first (the nests, else they match by a path)
		first   first
	}{
		{store.SearchQuery{Text: "wyvern", Limit: 25}, "", 3, first{25, false, true}},
		{store.SearchQuery{Text: "wyvern", Creator: "stone works", Limit: 25}, "Stone Works", 3, first{25, false, true}},
		{store.SearchQuery{Text: "wyvern_tail", Limit: 40}, "", 0, first{40, false, true}},
		{store.SearchQuery{Text: "wyvern", Creator: "other hands", Limit: 200}, "Other Hands", 0, first{115, true, false}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/%d", tt.q.Text, tt.q.Creator, tt.q.Limit), func(t *testing.T) {
			res, err := db.SearchPackages(ctx, tt.q)
			must(t, err)
			if got := (first{len(res.Hits), res.CountExact, res.Next != nil}); got != tt.first {
				t.Errorf("first page %+v, want %+v", got, tt.first)
			}
			if res.Count < int64(len(res.Hits)) {
				t.Errorf("count %d, below the page's %d rows", res.Count, len(res.Hits))
			}
			var want []string
			must(t, db.Tx().QueryRow(ctx, `SELECT array_agg(p.file_name ORDER BY p.id DESC) FROM packages p
				WHERE EXISTS (SELECT FROM package_files f WHERE f.package_id = p.id AND f.path ILIKE '%wyvern\_tail%')
				AND ($1 = '' OR p.creator = $1) AND NOT ($2 AND p.file_name LIKE 'Wyvern Nest%')`,
				tt.creator, tt.words > 0).Scan(&want))
			got := pagedNames(t, db, tt.q)
			if len(got) != tt.words+len(want) || !reflect.DeepEqual(got[tt.words:], want) {
				t.Errorf("page by page %d packages, want %d words' then the %d paths' newest first:\n%v", len(got), tt.words, len(want), got)
			}
			for _, name := range got[:tt.words] {
				if !strings.HasPrefix(name, "Wyvern Nest") {
					t.Errorf("%s before the paths' matches, want the words'", name)
				}
			}
		})
	}
}
