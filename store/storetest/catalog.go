package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// CatalogDB returns a database holding a generated catalog of n packages
// for benchmarks: a fresh clone, or, when HOARD_BENCH_DB_URL names a
// database, that one, generated once and kept for later runs (to tune
// queries by hand). maxConns sizes the pool (0 = pgx's default).
func CatalogDB(b testing.TB, n int, maxConns int32) *store.DB {
	b.Helper()
	ctx := context.Background()
	url := os.Getenv("HOARD_BENCH_DB_URL")
	keep := url != ""
	if !keep {
		url = URL(b)
	}
	db, err := store.Open(ctx, url, store.Options{MaxConns: maxConns})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.Close)
	if keep {
		if err := db.Migrate(ctx, nil); err != nil {
			b.Fatal(err)
		}
		var have int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM packages`).Scan(&have); err != nil {
			b.Fatal(err)
		}
		if have == n {
			// A kept catalog may have been migrated since it was made, and
			// nothing vacuums it where autovacuum is off: the index-only
			// reads of package_words need its visibility map.
			if _, err := db.Pool().Exec(ctx, `VACUUM ANALYZE package_words, package_paths`); err != nil {
				b.Fatal(err)
			}
			return db
		}
		// package_files by name: GenerateCatalog's load dropped its
		// foreign key, so CASCADE no longer reaches it. Not package_words:
		// the truncate trigger of packages empties it (naming it too fails
		// as "being used by active queries").
		if _, err := db.Pool().Exec(ctx, `TRUNCATE packages, package_files, package_paths, package_groups, catalog_creators, catalog_tags CASCADE`); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	GenerateCatalog(b, db.Pool(), n)
	if t, ok := b.(interface{ Logf(string, ...any) }); ok {
		t.Logf("generated %d packages in %s", n, time.Since(start).Round(time.Second))
	}
	return db
}

// BenchPackages is the catalog size of the benchmarks:
// HOARD_BENCH_PACKAGES, default 1,000,000.
func BenchPackages() int {
	if v := os.Getenv("HOARD_BENCH_PACKAGES"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return 1_000_000
}

// CatalogWords are the real words of GenerateCatalog's names, the most
// frequent first in its Zipf draw; CatalogSyllables make up the rest of its
// vocabulary (two or three of them to a word). Benchmarks draw their
// searches from both.
var (
	CatalogWords = []string{"dragon", "knight", "castle", "bust", "elf", "orc", "goblin", "wizard", "terrain", "ruins", "tower",
		"mech", "robot", "tank", "ship", "warrior", "archer", "mage", "skeleton", "zombie", "demon", "angel", "tree",
		"wall", "gate", "bridge", "statue", "throne", "sword", "shield", "helmet", "armor", "base", "diorama", "miniature",
		"figure", "creature", "beast", "wolf", "bear", "lion", "griffin", "hydra", "kraken", "phoenix", "titan", "giant"}
	CatalogSyllables = []string{"ka", "lo", "mi", "ra", "zen", "tor", "vel", "dun", "ash", "bri", "cor", "dra", "eth", "fal", "gor",
		"hal", "ith", "jor", "kel", "lum", "mor", "nar", "oth", "pra", "qua", "ryn", "sol", "tha", "ul", "vor", "wyn", "xal"}
)

// GenerateCatalog fills packages (and package_files for a tenth of them)
// with realistic, Zipf-skewed names, creators and tags, for benchmarks. It
// drops the search indexes during the load and builds them afterwards, and
// returns the most frequent creator. The names are deterministic, every
// 100,000th package is a "Quetzalcoatl Temple" (a rare word), and a third
// of the packages belong to groups of CatalogGroupSize consecutive ones.
func GenerateCatalog(b testing.TB, pool *pgxpool.Pool, n int) string {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(42, 7))
	vocab := slices.Clone(CatalogWords)
	for len(vocab) < 40_000 {
		w := ""
		for k := 2 + rng.IntN(2); k > 0; k-- {
			w += CatalogSyllables[rng.IntN(len(CatalogSyllables))]
		}
		vocab = append(vocab, w)
	}
	zipf := func(size int) int { u := rng.Float64(); return int(float64(size) * u * u * u * u) }
	word := func() string { return vocab[zipf(len(vocab))] }
	title := func(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
	suffixes := []string{"Factory", "Studio", "Miniatures", "Forge", "Works", "Labs", "Designs", "3D", "Sculpts", "Prints"}
	creators := make([]string, 20_000)
	for i := range creators {
		creators[i] = title(vocab[rng.IntN(len(vocab))]) + " " + suffixes[rng.IntN(len(suffixes))]
	}
	exts := []string{"zip", "zip", "zip", "zip", "zip", "zip", "zip", "zip", "zip", "zip", "rar", "rar", "rar", "7z", "7z", "stl", "stl", "stl", "3mf", "pdf"}
	types := map[string]string{"zip": "ZIP", "rar": "RAR", "7z": "7Z", "stl": "DOCUMENT", "3mf": "DOCUMENT", "pdf": "DOCUMENT"}
	tags := []string{"STL", "Terrain", "Fantasy", "Sci-Fi", "Busts", "Miniatures"}

	for _, stmt := range []string{
		`ALTER TABLE packages DROP CONSTRAINT IF EXISTS packages_pkey CASCADE`,
		`DROP INDEX packages_creator_search_idx`, `DROP INDEX packages_file_name_trgm_idx`, `DROP INDEX package_files_path_trgm_idx`,
		`DROP INDEX packages_name_grams_idx`,
		`ALTER TABLE packages DISABLE TRIGGER packages_catalog_names`,
		`ALTER TABLE packages DISABLE TRIGGER packages_words_insert`,
		`ALTER TABLE package_words DROP CONSTRAINT package_words_pkey`,
	} {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			b.Fatal(err)
		}
	}
	generateGroups(b, pool, n)
	epoch := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	const batch = 50_000
	for done := 0; done < n; done += batch {
		rows := make([][]any, 0, batch)
		for i := done; i < min(done+batch, n); i++ {
			c := creators[zipf(len(creators))]
			ext := exts[rng.IntN(len(exts))]
			var name string
			switch rng.IntN(5) {
			case 0:
				name = fmt.Sprintf("%s - %d-%02d.%s", c, 2019+rng.IntN(7), 1+rng.IntN(12), ext)
			case 1:
				name = fmt.Sprintf("%s_%s_%s.%s", title(word()), title(word()), []string{"v2", "supported", "presupported", "hollow"}[rng.IntN(4)], ext)
			case 2:
				name = fmt.Sprintf("%s%s %dmm.%s", title(word()), title(word()), 28+rng.IntN(50), ext)
			case 3:
				name = fmt.Sprintf("%s %s %s Pack.%s", title(word()), title(word()), title(word()), ext)
			default:
				name = fmt.Sprintf("%s-%s-%s.%s", word(), word(), word(), ext)
			}
			if i%100_000 == 7 {
				name = "Quetzalcoatl Temple " + strconv.Itoa(i) + ".zip"
			}
			rows = append(rows, []any{int64(i + 1), name, int64(1<<20) + rng.Int64N(1<<30), types[ext], c,
				[]string{tags[rng.IntN(len(tags))]}, epoch.Add(time.Duration(i) * time.Minute), catalogGroup(i), catalogFileCount(n, i+1)})
		}
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{"packages"},
			[]string{"id", "file_name", "file_size", "archive_type", "creator", "tags", "created_at", "package_group_id", "file_count"}, pgx.CopyFromRows(rows)); err != nil {
			b.Fatal(err)
		}
	}
	// 20 files for a tenth of the packages (catalogFileCount).
	for done := 0; done < n/10; done += 5000 {
		var rows [][]any
		for p := done; p < min(done+5000, n/10); p++ {
			pkg := int64(n - p*10)
			root := title(word())
			for f := range catalogFileCount(n, int(pkg)) {
				part := []string{"body", "head", "wings", "base", "arm_left", "arm_right", "tail", "weapon", "cloak", "legs"}[rng.IntN(10)]
				rows = append(rows, []any{pkg, f, fmt.Sprintf("%s/%s/%s_%02d.stl", root, word(), part, f), part + ".stl", "stl"})
			}
		}
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{"package_files"},
			[]string{"package_id", "ordinal", "path", "file_name", "extension"}, pgx.CopyFromRows(rows)); err != nil {
			b.Fatal(err)
		}
	}
	for _, stmt := range []string{
		`ALTER TABLE packages ADD PRIMARY KEY (id)`,
		`CREATE INDEX packages_creator_search_idx ON packages USING gin (lower(creator), search_vector) WITH (fastupdate = off)`,
		`CREATE INDEX packages_file_name_trgm_idx ON packages USING gin (file_name gin_trgm_ops) WITH (fastupdate = off)`,
		`CREATE INDEX package_files_path_trgm_idx ON package_files USING gin (path gin_trgm_ops)`,
		`CREATE INDEX packages_name_grams_idx ON packages USING gin (hoard_name_grams(file_name)) WITH (fastupdate = off)`,
		`ALTER INDEX packages_name_grams_idx ALTER COLUMN 1 SET STATISTICS 2000`,
		`ALTER TABLE packages ENABLE TRIGGER packages_catalog_names`,
		`INSERT INTO package_words (word, created_at, package_id, rank)
			SELECT w.word, p.created_at, p.id, w.rank FROM packages p, hoard_words_of(p.search_vector) AS w`,
		`ALTER TABLE package_words ADD PRIMARY KEY (word, created_at, package_id) INCLUDE (rank)`,
		`ALTER TABLE packages ENABLE TRIGGER packages_words_insert`,
		`INSERT INTO catalog_creators (creator) SELECT DISTINCT creator FROM packages ON CONFLICT DO NOTHING`,
		`INSERT INTO catalog_tags (tag) SELECT DISTINCT t FROM packages, unnest(tags) t ON CONFLICT DO NOTHING`,
		// The rows came with their ids: new packages continue after them.
		`SELECT setval(pg_get_serial_sequence('packages', 'id'), (SELECT max(id) FROM packages))`,
		`VACUUM ANALYZE packages`, `VACUUM ANALYZE package_files`, `VACUUM ANALYZE package_groups`, `VACUUM ANALYZE package_words`,
		`VACUUM ANALYZE package_paths`,
	} {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			b.Fatal(stmt, err)
		}
	}
	var top string
	if err := pool.QueryRow(ctx, `SELECT creator FROM packages GROUP BY creator ORDER BY count(*) DESC LIMIT 1`).Scan(&top); err != nil {
		b.Fatal(err)
	}
	return top
}

// CatalogGroupSize is the size of GenerateCatalog's groups.
const CatalogGroupSize = 10

// catalogGroup is the group of GenerateCatalog's package i (0-based), or
// nil: of every three runs of CatalogGroupSize packages, the first is a
// group.
func catalogGroup(i int) any {
	if run := i / CatalogGroupSize; run%3 == 0 {
		return int64(run/3 + 1)
	}
	return nil
}

// generateGroups stores the groups catalogGroup refers to.
func generateGroups(b testing.TB, pool *pgxpool.Pool, n int) {
	ctx := context.Background()
	var rows [][]any
	for i := 0; i < n; i += 3 * CatalogGroupSize {
		id := catalogGroup(i).(int64)
		rows = append(rows, []any{id, "Group " + strconv.FormatInt(id, 10), "AUTO_TIME"})
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"package_groups"}, []string{"id", "name", "grouping_source"}, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `SELECT setval(pg_get_serial_sequence('package_groups', 'id'), (SELECT max(id) FROM package_groups))`); err != nil {
		b.Fatal(err)
	}
}

// catalogFileCount is how many files GenerateCatalog lists for package id
// of n: 20 for the newest of every ten, none for the others.
func catalogFileCount(n, id int) int {
	if (n-id)%10 == 0 && (n-id)/10 < n/10 {
		return 20
	}
	return 0
}
