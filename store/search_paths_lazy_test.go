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
