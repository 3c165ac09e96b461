package store_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// findFixture stores packages whose words, creators, tags, sizes and
// archive entries the search shapes of issue #16 look for; later specs are
// newer.
func findFixture(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	specs := []struct {
		name, creator string
		tags          []string
		size          int64
		files         []string
	}{
		{"Dragon Forge.zip", "Dragon Forge", []string{"Fantasy"}, 100,
			[]string{"Hoard Set/chest.stl", "Hoard Set/goblin.stl", "Hoard Set/render.png", "Hoard Set/chest_lid.stl"}},
		{"Knight Bust.stl", "Mammoth Factory", []string{"Sci-Fi"}, 300, []string{"knight/chest_plate.stl"}},
		{"Chest of Wonders.zip", "Other Maker", []string{"Terrain"}, 200, nil},
		{"Orc Warband.7z", "Dragonslayer Minis", nil, 400, nil},
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, s := range specs {
		p := mustPackage(t, db, func(p *hoard.Package) {
			p.FileName, p.Creator, p.Tags, p.FileSize = s.name, s.creator, s.tags, s.size
		})
		var files []hoard.PackageFile
		for _, f := range s.files {
			files = append(files, hoard.PackageFile{Path: f})
		}
		must(t, db.ReplacePackageFiles(ctx, p.ID, files))
		_, err := db.Tx().Exec(ctx, `UPDATE packages SET created_at = $2 WHERE id = $1`, p.ID, base.Add(time.Duration(i)*time.Hour))
		must(t, err)
	}
}

// found is a search result as these tests compare it: its mode, its rows
// with the files they matched, and its count.
type found struct {
	Mode  store.SearchMode
	Hits  []string
	Count int64
	Exact bool
}

func foundOf(res *store.SearchResult) found {
	f := found{Mode: res.Mode, Count: res.Count, Exact: res.CountExact}
	for _, h := range res.Hits {
		s := h.Package.FileName
		if h.FilesMatched > 0 {
			s += fmt.Sprintf(" [%d: %v]", h.FilesMatched, h.MatchedPaths)
		}
		f.Hits = append(f.Hits, s)
	}
	return f
}

func TestSearchFindsInsideNamesAndArchives(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	findFixture(t, db)
	const (
		forge  = "Dragon Forge.zip"
		knight = "Knight Bust.stl"
		chest  = "Chest of Wonders.zip"
		orc    = "Orc Warband.7z"
	)
	tests := []struct {
		name string
		q    store.SearchQuery
		want found
	}{
		{"every word is a prefix", store.SearchQuery{Text: "drag forge"},
			found{store.SearchFullText, []string{forge}, 1, true}},
		{"two characters inside a word", store.SearchQuery{Text: "ag"},
			found{store.SearchShort, []string{forge}, 1, true}},
		{"one character inside words, newest first", store.SearchQuery{Text: "w"},
			found{store.SearchShort, []string{orc, chest}, 2, true}},
		{"two short words both inside the name", store.SearchQuery{Text: "o W"},
			found{store.SearchShort, []string{orc, chest}, 2, true}},
		{"name outranks archive paths", store.SearchQuery{Text: "chest"},
			found{store.SearchFullText, []string{chest, knight + " [1: [knight/chest_plate.stl]]",
				forge + " [2: [Hoard Set/chest.stl Hoard Set/chest_lid.stl]]"}, 3, true}},
		{"a path with its extension", store.SearchQuery{Text: "chest.stl"},
			found{store.SearchFullText, []string{forge + " [1: [Hoard Set/chest.stl]]"}, 1, true}},
		{"goblin.stl", store.SearchQuery{Text: "goblin.stl"},
			found{store.SearchFullText, []string{forge + " [1: [Hoard Set/goblin.stl]]"}, 1, true}},
		{"render.png, any case", store.SearchQuery{Text: "RENDER.png"},
			found{store.SearchFullText, []string{forge + " [1: [Hoard Set/render.png]]"}, 1, true}},
		{"a whole path", store.SearchQuery{Text: "Hoard Set/chest.stl"},
			found{store.SearchFullText, []string{forge + " [1: [Hoard Set/chest.stl]]"}, 1, true}},
		{"creator prefix, any case", store.SearchQuery{Creator: "dragon"},
			found{store.SearchRecent, []string{orc, forge}, 2, true}},
		{"a first page without an estimate counts its rows", store.SearchQuery{Limit: 1, NoEstimate: true},
			found{store.SearchRecent, []string{orc}, 1, false}},
		{"longer creator prefix", store.SearchQuery{Creator: "DRAGON F"},
			found{store.SearchRecent, []string{forge}, 1, true}},
		{"creator prefix with words", store.SearchQuery{Text: "chest", Creator: "mammoth"},
			found{store.SearchFullText, []string{knight + " [1: [knight/chest_plate.stl]]"}, 1, true}},
		{"a creator's page: the whole name", store.SearchQuery{Creator: "dragon forge", WholeNames: true},
			found{store.SearchRecent, []string{forge}, 1, true}},
		{"a creator's page: no prefix", store.SearchQuery{Creator: "dragon", WholeNames: true}, found{store.SearchRecent, nil, 0, true}},
		{"a tag's page: the whole tag", store.SearchQuery{Tags: []string{"sci"}, WholeNames: true}, found{store.SearchRecent, nil, 0, true}},
		{"unknown creator", store.SearchQuery{Creator: "nobody"}, found{store.SearchRecent, nil, 0, true}},
		{"tag, any case", store.SearchQuery{Tags: []string{"fantasy"}},
			found{store.SearchRecent, []string{forge}, 1, true}},
		{"tag prefix", store.SearchQuery{Tags: []string{"sci"}},
			found{store.SearchRecent, []string{knight}, 1, true}},
		{"every tag must match", store.SearchQuery{Tags: []string{"sci", "fan"}}, found{store.SearchRecent, nil, 0, true}},
		{"by name", store.SearchQuery{Sort: store.SortName},
			found{store.SearchRecent, []string{chest, forge, knight, orc}, 4, true}},
		{"by size", store.SearchQuery{Sort: store.SortSize},
			found{store.SearchRecent, []string{orc, knight, chest, forge}, 4, true}},
		{"newest", store.SearchQuery{Sort: store.SortNewest},
			found{store.SearchRecent, []string{orc, chest, knight, forge}, 4, true}},
		{"words by name", store.SearchQuery{Text: "chest", Sort: store.SortName},
			found{store.SearchFullText, []string{chest, forge + " [2: [Hoard Set/chest.stl Hoard Set/chest_lid.stl]]",
				knight + " [1: [knight/chest_plate.stl]]"}, 3, true}},
		{"words by size", store.SearchQuery{Text: "chest", Sort: store.SortSize},
			found{store.SearchFullText, []string{knight + " [1: [knight/chest_plate.stl]]", chest,
				forge + " [2: [Hoard Set/chest.stl Hoard Set/chest_lid.stl]]"}, 3, true}},
		{"short text by size", store.SearchQuery{Text: "w", Sort: store.SortSize},
			found{store.SearchShort, []string{orc, chest}, 2, true}},
		{"short text by name", store.SearchQuery{Text: "w", Sort: store.SortName},
			found{store.SearchShort, []string{chest, orc}, 2, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := db.SearchPackages(ctx, tt.q)
			must(t, err)
			if got := foundOf(res); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestSearchRefusesBadSortAndForeignCursor(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	findFixture(t, db)
	_, err := db.SearchPackages(ctx, store.SearchQuery{Sort: "price"})
	wantCode(t, err, hoard.EINVALID)
	res, err := db.SearchPackages(ctx, store.SearchQuery{Sort: store.SortName, Limit: 1})
	must(t, err)
	_, err = db.SearchPackages(ctx, store.SearchQuery{Sort: store.SortSize, After: res.Next})
	wantCode(t, err, hoard.EINVALID)
}

// TestSearchFindPagination: the pages of a search with archive matches,
// short text and every order are together its single-page result.
func TestSearchFindPagination(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	findFixture(t, db)
	for _, q := range []store.SearchQuery{
		{Text: "chest"}, {Text: "chest", Sort: store.SortName}, {Text: "chest", Sort: store.SortSize},
		{Text: "o"}, {Text: "o", Sort: store.SortSize}, {Creator: "drag", Sort: store.SortName},
	} {
		t.Run(fmt.Sprintf("%+v", q), func(t *testing.T) {
			paged, want := pagedAndWhole(t, db, q, 10, func(res *store.SearchResult) []string { return foundOf(res).Hits })
			if !reflect.DeepEqual(paged, want) || len(want) < 2 {
				t.Fatalf("pages %q, whole %q", paged, want)
			}
		})
	}
}
