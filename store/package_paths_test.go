package store_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// pathChunk is a row of package_paths as the test compares it.
type pathChunk struct {
	Chunk   int
	Paths   string
	Creator string // lower-cased
}

// TestPackagePathsFollowTheListing checks that package_paths, the
// lower-cased paths the catalog search matches, follows every change to
// package_files, by ReplacePackageFiles or by any other statement, and
// every change to its package's creator.
func TestPackagePathsFollowTheListing(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	p := mustPackage(t, db, func(p *hoard.Package) { p.Creator = "Mammoth Factory" })
	other := mustPackage(t, db)
	must(t, db.ReplacePackageFiles(ctx, other.ID, []hoard.PackageFile{{Path: "Other/Keep.STL"}}))
	chunks := func(id int64) []pathChunk {
		t.Helper()
		rows, err := db.Tx().Query(ctx, `SELECT chunk, paths, coalesce(creator, '') FROM package_paths WHERE package_id = $1 ORDER BY chunk`, id)
		must(t, err)
		defer rows.Close()
		var out []pathChunk
		for rows.Next() {
			var c pathChunk
			must(t, rows.Scan(&c.Chunk, &c.Paths, &c.Creator))
			out = append(out, c)
		}
		must(t, rows.Err())
		return out
	}
	var many []hoard.PackageFile
	var first, second []string
	for i := range 300 {
		path := fmt.Sprintf("Set/Part_%03d.STL", i)
		many = append(many, hoard.PackageFile{Path: path})
		if i < 256 {
			first = append(first, strings.ToLower(path))
		} else {
			second = append(second, strings.ToLower(path))
		}
	}
	const mf = "mammoth factory"
	steps := []struct {
		name string
		do   func()
		want []pathChunk
	}{
		{"a listing, lower-cased", func() {
			must(t, db.ReplacePackageFiles(ctx, p.ID, []hoard.PackageFile{{Path: "Hoard Set/Chest.STL"}, {Path: "Hoard Set/Goblin.stl"}}))
		}, []pathChunk{{0, "hoard set/chest.stl\nhoard set/goblin.stl", mf}}},
		{"a replaced listing, in chunks of 256", func() { must(t, db.ReplacePackageFiles(ctx, p.ID, many)) },
			[]pathChunk{{0, strings.Join(first, "\n"), mf}, {1, strings.Join(second, "\n"), mf}}},
		{"an entry renamed by hand", func() {
			execTx(t, db, `UPDATE package_files SET path = 'Set/Crown.STL' WHERE package_id = $1 AND ordinal = 299`, p.ID)
		}, []pathChunk{{0, strings.Join(first, "\n"), mf}, {1, strings.Join(append(second[:len(second)-1], "set/crown.stl"), "\n"), mf}}},
		{"entries deleted by hand", func() { execTx(t, db, `DELETE FROM package_files WHERE package_id = $1 AND ordinal >= 1`, p.ID) },
			[]pathChunk{{0, "set/part_000.stl", mf}}},
		{"an entry added by hand", func() {
			execTx(t, db, `INSERT INTO package_files (package_id, ordinal, path, file_name) VALUES ($1, 1, 'Extra/Base.stl', 'Base.stl')`, p.ID)
		}, []pathChunk{{0, "set/part_000.stl\nextra/base.stl", mf}}},
		{"the creator renamed by hand", func() { execTx(t, db, `UPDATE packages SET creator = 'Tiny Forge' WHERE id = $1`, p.ID) },
			[]pathChunk{{0, "set/part_000.stl\nextra/base.stl", "tiny forge"}}},
		{"the creator removed by hand", func() { execTx(t, db, `UPDATE packages SET creator = NULL WHERE id = $1`, p.ID) },
			[]pathChunk{{0, "set/part_000.stl\nextra/base.stl", ""}}},
		{"an empty listing", func() { must(t, db.ReplacePackageFiles(ctx, p.ID, nil)) }, nil},
	}
	for _, s := range steps {
		s.do()
		if got := chunks(p.ID); !reflect.DeepEqual(got, s.want) {
			t.Fatalf("after %s: package_paths = %+v, want %+v", s.name, got, s.want)
		}
	}
	if got, want := chunks(other.ID), []pathChunk{{0, "other/keep.stl", ""}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("another package's paths = %+v, want %+v", got, want)
	}
	execTx(t, db, `DELETE FROM packages WHERE id = $1`, other.ID)
	if got := chunks(other.ID); got != nil {
		t.Fatalf("a deleted package keeps its paths: %+v", got)
	}
}

// TestSearchFindsPathsInLaterChunks checks that the catalog search finds a
// package by a path past its first chunk of package_paths, in any case,
// and names the file that matched.
func TestSearchFindsPathsInLaterChunks(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	p := mustPackage(t, db, func(p *hoard.Package) { p.FileName = "Vault.zip" })
	var files []hoard.PackageFile
	for i := range 300 {
		files = append(files, hoard.PackageFile{Path: fmt.Sprintf("Vault/piece_%03d.stl", i)})
	}
	files[280].Path = "Vault/Relic_Crown.STL"
	must(t, db.ReplacePackageFiles(ctx, p.ID, files))
	tests := []struct {
		text string
		want found
	}{
		{"relic_crown", found{store.SearchFullText, []string{"Vault.zip [1: [Vault/Relic_Crown.STL]]"}, 1, true}},
		{"RELIC_CROWN.stl", found{store.SearchFullText, []string{"Vault.zip [1: [Vault/Relic_Crown.STL]]"}, 1, true}},
		{"piece_299", found{store.SearchFullText, []string{"Vault.zip [1: [Vault/piece_299.stl]]"}, 1, true}},
		{"piece_279\nvault", found{store.SearchSubstring, nil, 0, true}}, // no path holds a newline
	}
	for _, tt := range tests {
		res, err := db.SearchPackages(ctx, store.SearchQuery{Text: tt.text})
		must(t, err)
		if got := foundOf(res); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %+v, want %+v", tt.text, got, tt.want)
		}
	}
}

// TestSearchFindsACreatorsPaths checks that a search with a creator finds
// the creator's packages by the paths inside them, below another
// creator's newer matches that fill the candidates on their own, in every
// way the lookup can go: the creator's chunks in one probe, walked batch
// by batch after a probe that holds the text densely (four in all), and
// from the index of creators and trigrams after a probe that holds it
// sparsely or a walk that ends short. Those ways are taken to find the newest rankCandidates (with
// group rows); in relevance order each page finds its own (one more than
// it shows), and page after page reaches every match, past the
// candidates' bound, in the same order.
func TestSearchFindsACreatorsPaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hits := func(names ...string) []string {
		for i, n := range names {
			names[i] = fmt.Sprintf("%s [1: [%s/Relic_Crown.stl]]", n, n)
		}
		return names
	}
	ann := found{store.SearchFullText, hits("Ann 3.zip", "Ann 2.zip", "Ann 1.zip"), 3, true}
	cyd := found{store.SearchFullText, hits("Cyd 250.zip", "Cyd 225.zip", "Cyd 200.zip"), 10, true} // every 25th of 250
	bob := hits("Bob 250.zip", "Bob 249.zip", "Bob 248.zip")                                        // all of 250
	tests := []struct {
		probe, batch int // chunks tested first, then at a time
		want         map[string]found
	}{
		{1000, 1000, map[string]found{"Ann": ann, "Cyd": cyd, "Bob": {store.SearchFullText, bob, 200, false}}},
		{100, 100, map[string]found{"Ann": ann, "Cyd": cyd, "Bob": {store.SearchFullText, bob, 200, false}}}, // Cyd: from the index
		// the bound of a walk, four batches: Bob's newest 5 + 3 × 50 hold
		// 155, Cyd's seven (one hit in the first 5 counts as dense); short
		// of what they want, both go on from the index (they stopped there,
		// and lost the rest, before the walk said so)
		{5, 50, map[string]found{"Ann": ann, "Cyd": cyd, "Bob": {store.SearchFullText, bob, 200, false}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("probe=%d,batch=%d", tt.probe, tt.batch), func(t *testing.T) {
			t.Parallel()
			db := storetest.NewTx(t)
			db.SetPathsWalk(tt.probe, tt.batch)
			var ids []int64
			add := func(creator string, n int) {
				for i := 1; i <= n; i++ {
					name := fmt.Sprintf("%s %d.zip", creator, i)
					ids = append(ids, mustPackage(t, db, func(p *hoard.Package) { p.FileName, p.Creator = name, creator+" Prints" }).ID)
				}
			}
			add("Ann", 3)
			add("Cyd", 250)
			add("Bob", 250)
			execTx(t, db, `INSERT INTO package_files (package_id, ordinal, path, file_name)
				SELECT p.id, o.n, p.file_name || CASE WHEN o.n = 0 AND (p.creator <> 'Cyd Prints' OR p.file_name ~ '^Cyd [0-9]*(00|25|50|75)\.zip$')
					THEN '/Relic_Crown.stl' ELSE '/Base.stl' END, 'x.stl'
				FROM packages p CROSS JOIN generate_series(0, 1) AS o(n) WHERE p.id = ANY($1)`, ids)
			execTx(t, db, `UPDATE packages SET file_count = 2 WHERE id = ANY($1)`, ids)
			for _, creator := range []string{"Ann", "Cyd", "Bob"} {
				res, err := db.SearchPackages(ctx, store.SearchQuery{Text: "relic_crown", Creator: creator, Limit: 3, GroupRows: true})
				must(t, err)
				if got := foundOf(res); !reflect.DeepEqual(got, tt.want[creator]) {
					t.Errorf("creator %s: got %+v, want %+v", creator, got, tt.want[creator])
				}
				var every []string
				must(t, db.Tx().QueryRow(ctx, `SELECT array_agg(p.file_name ORDER BY p.id DESC) FROM packages p
					WHERE p.id = ANY($1) AND p.creator = $2 AND EXISTS (SELECT FROM package_files f WHERE f.package_id = p.id AND f.path LIKE '%Relic_Crown%')`,
					ids, creator+" Prints").Scan(&every))
				if got := pagedNames(t, db, store.SearchQuery{Text: "relic_crown", Creator: creator, Limit: 40}); !reflect.DeepEqual(got, every) {
					t.Errorf("creator %s, page by page: got %d packages %v, want %d %v", creator, len(got), got, len(every), every)
				}
			}
		})
	}
}

// pagedNames pages through q's results and returns their packages' names.
func pagedNames(t *testing.T, db *store.DB, q store.SearchQuery) []string {
	t.Helper()
	var names []string
	for {
		res, err := db.SearchPackages(context.Background(), q)
		must(t, err)
		for _, h := range res.Hits {
			names = append(names, h.Package.FileName)
		}
		if q.After = res.Next; q.After == nil {
			return names
		}
	}
}
