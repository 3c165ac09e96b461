package store_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// wordEntries is what package_words holds for one package, as the tests
// compare it.
type wordEntries struct {
	Words     []string // sorted
	CreatedAt time.Time
}

// packageWords reads package_words' entries of package id; every entry
// must carry the same date.
func packageWords(t *testing.T, db *store.DB, id int64) wordEntries {
	t.Helper()
	rows, err := db.Tx().Query(context.Background(), `SELECT word, created_at FROM package_words WHERE package_id = $1 ORDER BY word`, id)
	must(t, err)
	defer rows.Close()
	var got wordEntries
	for rows.Next() {
		var w string
		var at time.Time
		must(t, rows.Scan(&w, &at))
		if !got.CreatedAt.IsZero() && !at.Equal(got.CreatedAt) {
			t.Fatalf("package %d's entries carry two dates: %s and %s", id, got.CreatedAt, at)
		}
		got.Words, got.CreatedAt = append(got.Words, w), at.UTC()
	}
	must(t, rows.Err())
	return got
}

// TestPackageWordsFollowThePackages checks that package_words, the
// lexemes one-word searches read, follows every change to a package's
// words and date, by the store or by any other statement.
func TestPackageWordsFollowThePackages(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	p := mustPackage(t, db, func(p *hoard.Package) {
		p.FileName, p.Creator, p.Tags = "Dragon Keep.zip", "Forge Works", []string{"Terrain"}
	})
	other := mustPackage(t, db, func(p *hoard.Package) { p.FileName = "Goblin Camp.zip" })
	steps := []struct {
		name string
		do   func()
		want wordEntries
	}{
		{"a new package: its name, creator and tags", func() { execTx(t, db, `UPDATE packages SET created_at = $2 WHERE id = $1`, p.ID, day) },
			wordEntries{[]string{"dragon", "forg", "keep", "terrain", "work", "zip"}, day}},
		{"a renamed package", func() { execTx(t, db, `UPDATE packages SET file_name = 'Wyvern Keep.7z' WHERE id = $1`, p.ID) },
			wordEntries{[]string{"7z", "forg", "keep", "terrain", "work", "wyvern"}, day}},
		{"a caption", func() { execTx(t, db, `UPDATE packages SET source_caption = 'Castles, towers!' WHERE id = $1`, p.ID) },
			wordEntries{[]string{"7z", "castl", "forg", "keep", "terrain", "tower", "work", "wyvern"}, day}},
		{"a change that leaves the words alone", func() { execTx(t, db, `UPDATE packages SET file_size = 7 WHERE id = $1`, p.ID) },
			wordEntries{[]string{"7z", "castl", "forg", "keep", "terrain", "tower", "work", "wyvern"}, day}},
		{"a new date", func() { execTx(t, db, `UPDATE packages SET created_at = $2 WHERE id = $1`, p.ID, day.AddDate(0, 1, 0)) },
			wordEntries{[]string{"7z", "castl", "forg", "keep", "terrain", "tower", "work", "wyvern"}, day.AddDate(0, 1, 0)}},
		{"tags and creator gone", func() { execTx(t, db, `UPDATE packages SET tags = '{}', creator = NULL WHERE id = $1`, p.ID) },
			wordEntries{[]string{"7z", "castl", "keep", "tower", "wyvern"}, day.AddDate(0, 1, 0)}},
		{"a deleted package", func() { execTx(t, db, `DELETE FROM packages WHERE id = $1`, p.ID) }, wordEntries{}},
	}
	for _, s := range steps {
		s.do()
		if got := packageWords(t, db, p.ID); !reflect.DeepEqual(got, s.want) {
			t.Fatalf("after %s: package_words = %+v, want %+v", s.name, got, s.want)
		}
	}
	if got := packageWords(t, db, other.ID); !reflect.DeepEqual(got.Words, []string{"camp", "goblin", "zip"}) {
		t.Fatalf("another package's words = %v, want its own", got.Words)
	}
}

// TestPackageWordsEmptiedByTruncate: truncating packages (a test reset, a
// benchmark's reload) empties package_words too.
func TestPackageWordsEmptiedByTruncate(t *testing.T) {
	db := storetest.NewDB(t)
	ctx := context.Background()
	mustPackage(t, db, func(p *hoard.Package) { p.FileName = "Dragon Keep.zip" })
	if _, err := db.Pool().Exec(ctx, `TRUNCATE packages CASCADE`); err != nil {
		t.Fatal(err)
	}
	var n int
	must(t, db.Pool().QueryRow(ctx, `SELECT count(*) FROM package_words`).Scan(&n))
	if n != 0 {
		t.Fatalf("package_words keeps %d entries of truncated packages", n)
	}
}

// TestOneWordSearchesReadPackageWords checks that a ranked one-word search
// without filters gives the same page as the full-text index does (the
// same search with a filter every package passes goes there), for words
// that are whole lexemes, prefixes of several, stop words and prefixes of
// too many lexemes (only the count may differ: package_words' page leaves
// the paths to a later page where its words fill it); and that it is
// served by package_words.
func TestOneWordSearchesReadPackageWords(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	// 260 packages over a few hours: "basilisk" in every one (capped),
	// "basiliskborn" in every fifth (one prefix, two lexemes, some
	// packages holding both), "kal…" made-up words of 40 lexemes, and a
	// caption's stop word; the words also in creators, tags and captions,
	// some twice, so that the ranks differ.
	execTx(t, db, `INSERT INTO packages (file_name, file_size, archive_type, creator, tags, source_caption, created_at)
		SELECT 'Basilisk ' || CASE WHEN i % 5 = 0 THEN 'Basiliskborn ' ELSE '' END || 'Kal' || (i % 40) || 'x Lair ' || i || '.zip',
			i, 'ZIP', CASE WHEN i % 3 = 0 THEN 'Basilisk Forge' ELSE 'Kal7x Works' END,
			CASE WHEN i % 4 = 0 THEN '{Basiliskborn,Lair}'::text[] ELSE '{}' END,
			'the lair of it' || CASE WHEN i % 6 = 0 THEN ', basilisks and a basilisk' ELSE '' END,
			'2024-01-01'::timestamptz + (i % 97) * interval '1 minute'
		FROM generate_series(1, 260) i`)
	for _, text := range []string{"basilisk", "Basiliskborn", "basil", "kal7x", "kal1", "kal", "ka", "lair", "the", "quetzal"} {
		t.Run(text, func(t *testing.T) {
			for _, q := range []store.SearchQuery{{Text: text, Limit: 30}, {Text: text, Limit: 30, GroupRows: true}, {Text: text, Sort: store.SortName, Limit: 30},
				{Text: text, Limit: 30, Creator: "basilisk forge"}, {Text: text, Limit: 30, Creator: "Kal7", GroupRows: true}, {Text: text, Sort: store.SortSize, Limit: 30, Creator: "basilisk"}} {
				got, err := db.SearchPackages(ctx, q)
				must(t, err)
				q.ArchiveType = hoard.ArchiveZIP // every package: the full-text index's path
				want, err := db.SearchPackages(ctx, q)
				must(t, err)
				g, w := shown(got), shown(want)
				if !got.CountExact && !got.Capped && want.CountExact {
					// package_words' page left the paths to a later page: its
					// count is the words' matches, at most all the matches.
					if got.Count > want.Count {
						t.Errorf("%+v: package_words counts %d, more than the %d matches", q, got.Count, want.Count)
					}
					g.Count, g.CountExact = w.Count, w.CountExact
				}
				if !reflect.DeepEqual(g, w) {
					t.Fatalf("%+v: package_words found\n%+v\nthe full-text index\n%+v", q, g, w)
				}
			}
		})
	}
	// A caller that shows no total (the bot) gets the rows found instead
	// of the planner's estimate (which, with statistics, is about 260).
	execTx(t, db, `ANALYZE package_words`)
	type count struct {
		Count         int64
		Exact, Capped bool
	}
	res, err := db.SearchPackages(ctx, store.SearchQuery{Text: "basilisk", Limit: 30, NoEstimate: true})
	must(t, err)
	if got, want := (count{res.Count, res.CountExact, res.Capped}), (count{200, false, true}); got != want {
		t.Fatalf("basilisk without an estimate counts %+v, want %+v", got, want)
	}
	// Served by package_words: without one package's entries the search
	// does not find it; the full-text index still does.
	var newest int64
	must(t, db.Tx().QueryRow(ctx, `SELECT id FROM packages ORDER BY created_at DESC, id DESC LIMIT 1`).Scan(&newest))
	execTx(t, db, `DELETE FROM package_words WHERE package_id = $1`, newest)
	for _, c := range []struct {
		q    store.SearchQuery
		want bool
	}{{store.SearchQuery{Text: "basilisk", Sort: store.SortName, Limit: 200}, false},
		{store.SearchQuery{Text: "basilisk", Sort: store.SortName, Limit: 200, ArchiveType: hoard.ArchiveZIP}, true}} {
		res, err := db.SearchPackages(ctx, c.q)
		must(t, err)
		found := false
		for _, h := range res.Hits {
			found = found || h.Package.ID == newest
		}
		if found != c.want {
			t.Fatalf("%+v found the package without entries: %v, want %v", c.q, found, c.want)
		}
	}
}

// shownPage is what a page of results shows, for comparing two searches.
type shownPage struct {
	Rows       []string
	Count      int64
	CountExact bool
	Capped     bool
	Next       bool
}

func shown(r *store.SearchResult) shownPage {
	p := shownPage{Count: r.Count, CountExact: r.CountExact, Capped: r.Capped, Next: r.Next != nil}
	for _, h := range r.Hits {
		row := fmt.Sprintf("%d %q %.4f", h.Package.ID, h.Package.FileName, h.Rank)
		if h.Group != nil {
			row += fmt.Sprintf(" group %d", h.Group.ID)
		}
		p.Rows = append(p.Rows, row)
	}
	if r.CountExact {
		return p
	}
	p.Count = 0 // an estimate: each path asks the planner about its own table
	return p
}

// TestPackageCreatorWordsFollowThePackages checks that
// package_creator_words holds package_words' entries of every package with
// a creator, under its lower-cased creator, whatever changes the package.
func TestPackageCreatorWordsFollowThePackages(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	p := mustPackage(t, db, func(p *hoard.Package) { p.FileName, p.Creator = "Dragon Bust.zip", "Mammoth Factory" })
	// entries is package_creator_words' creator and words of p, and
	// whether they are package_words' (with the same dates and ranks).
	entries := func() (creators []string, same bool) {
		t.Helper()
		err := db.Tx().QueryRow(ctx, `SELECT coalesce(array_agg(DISTINCT c.creator), '{}'),
				NOT EXISTS ((SELECT word, created_at, rank FROM package_creator_words WHERE package_id = $1)
					EXCEPT (SELECT word, created_at, rank FROM package_words WHERE package_id = $1)
					UNION ALL
					(SELECT word, created_at, rank FROM package_words WHERE package_id = $1)
					EXCEPT (SELECT word, created_at, rank FROM package_creator_words WHERE package_id = $1))
			FROM package_creator_words c WHERE c.package_id = $1`, p.ID).Scan(&creators, &same)
		must(t, err)
		return creators, same
	}
	steps := []struct {
		name     string
		sql      string
		creators []string
		same     bool
	}{
		{"a new package", ``, []string{"mammoth factory"}, true},
		{"a renamed package", `UPDATE packages SET file_name = 'Wyvern Keep.7z' WHERE id = $1`, []string{"mammoth factory"}, true},
		{"a new date", `UPDATE packages SET created_at = created_at - interval '1 day' WHERE id = $1`, []string{"mammoth factory"}, true},
		{"another creator", `UPDATE packages SET creator = 'Elves Inc' WHERE id = $1`, []string{"elves inc"}, true},
		{"the creator's case only", `UPDATE packages SET creator = 'ELVES INC' WHERE id = $1`, []string{"elves inc"}, true},
		{"no creator", `UPDATE packages SET creator = NULL WHERE id = $1`, []string{}, false},
		{"a creator again", `UPDATE packages SET creator = 'Orc Forge' WHERE id = $1`, []string{"orc forge"}, true},
		{"a deleted package", `DELETE FROM packages WHERE id = $1`, []string{}, true},
	}
	for _, s := range steps {
		if s.sql != "" {
			execTx(t, db, s.sql, p.ID)
		}
		creators, same := entries()
		if !slices.Equal(creators, s.creators) || same != s.same {
			t.Fatalf("after %s: creators %q, same entries as package_words %v; want %q, %v", s.name, creators, same, s.creators, s.same)
		}
	}
}
