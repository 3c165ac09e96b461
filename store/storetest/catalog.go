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
// database, that one (created if the server lacks it), generated once and
// kept for later runs (to tune queries by hand). maxConns sizes the pool
// (0 = pgx's default).
func CatalogDB(b testing.TB, n int, maxConns int32) *store.DB {
	b.Helper()
	ctx := context.Background()
	url := os.Getenv("HOARD_BENCH_DB_URL")
	keep := url != ""
	if !keep {
		url = URL(b)
	} else if err := createDatabase(ctx, url); err != nil {
		b.Fatal(err)
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
			// reads of package_words, package_creator_words and
			// package_name_tokens need their visibility maps.
			if _, err := db.Pool().Exec(ctx, `VACUUM ANALYZE package_words, package_creator_words, package_paths, package_name_tokens`); err != nil {
				b.Fatal(err)
			}
			return db
		}
		// package_files by name: a catalog generated before issue #30
		// lost its foreign key, so CASCADE does not reach it there. Not
		// package_words: the truncate trigger of packages empties it
		// (naming it too fails as "being used by active queries").
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

// createDatabase creates the database connURL names unless its server
// has it, connecting to the server's database "postgres" to do so.
func createDatabase(ctx context.Context, connURL string) error {
	cfg, err := pgx.ParseConfig(connURL)
	if err != nil {
		return fmt.Errorf("HOARD_BENCH_DB_URL: %w", err)
	}
	name := cfg.Database
	cfg.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to create %s: %w", name, err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var have bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)`, name).Scan(&have); err != nil {
		return fmt.Errorf("look for database %s: %w", name, err)
	}
	if !have {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return fmt.Errorf("create database %s: %w", name, err)
		}
	}
	return nil
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

// CatalogRareNames is how many of GenerateCatalog's names hold its rare
// word, whatever the catalog's size (from 64 packages up), half of them by
// the most frequent creator: a search for it, with that creator or not,
// does the same work at 100,000 packages as at 10,000,000 (one in every
// 100,000 names made it 1 match at 100k and 10 at 1M, and whether the
// creator held one was chance).
const CatalogRareNames = 8

// GenerateCatalog fills packages (and package_files for a tenth of them)
// with realistic, Zipf-skewed names, creators and tags, for benchmarks, and
// returns the most frequent creator. The names are deterministic,
// CatalogRareNames packages at every size are a "Quetzalcoatl Temple" (a
// rare word), and a third of the packages belong to groups of
// CatalogGroupSize consecutive ones.
//
// It loads in bulk, as a restore would: the indexes, primary keys and
// foreign keys of the catalog's tables are dropped first and rebuilt after
// the rows are in (several at once, on connections of its own), and what
// the row triggers would derive (search vectors, package_words,
// package_paths, package_creator_words, the names' tokens, the creators and tags lists) is computed set-wise by the
// same expressions. The result is the schema and rows that inserting the
// packages one by one would give (TestGenerateCatalog checks it).
func GenerateCatalog(b testing.TB, pool *pgxpool.Pool, n int) string {
	b.Helper()
	top, err := generateCatalog(context.Background(), pool, n, b.Logf)
	if err != nil {
		b.Fatalf("generate catalog of %d packages: %v", n, err)
	}
	return top
}

// catalogGen draws GenerateCatalog's rows from one seeded source, always
// in the same order (every package, then the files), so that every run
// gives the same catalog.
type catalogGen struct {
	rng      *rand.Rand
	n        int
	vocab    []string
	creators []string
	// nameTokens gathers the tokens of the names drawn (catalogTokens),
	// which name_tokens lists.
	nameTokens map[string]struct{}
}

var (
	catalogSuffixes = []string{"Factory", "Studio", "Miniatures", "Forge", "Works", "Labs", "Designs", "3D", "Sculpts", "Prints"}
	catalogExts     = []string{"zip", "zip", "zip", "zip", "zip", "zip", "zip", "zip", "zip", "zip", "rar", "rar", "rar", "7z", "7z", "stl", "stl", "stl", "3mf", "pdf"}
	catalogTypes    = map[string]string{"zip": "ZIP", "rar": "RAR", "7z": "7Z", "stl": "DOCUMENT", "3mf": "DOCUMENT", "pdf": "DOCUMENT"}
	catalogTags     = []string{"STL", "Terrain", "Fantasy", "Sci-Fi", "Busts", "Miniatures"}
	catalogParts    = []string{"body", "head", "wings", "base", "arm_left", "arm_right", "tail", "weapon", "cloak", "legs"}
	catalogEpoch    = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
)

// newCatalogGen draws the vocabulary and the creators of a catalog of n
// packages.
func newCatalogGen(n int) *catalogGen {
	g := &catalogGen{rng: rand.New(rand.NewPCG(42, 7)), n: n, vocab: slices.Clone(CatalogWords), nameTokens: map[string]struct{}{}}
	for len(g.vocab) < 40_000 {
		w := ""
		for k := 2 + g.rng.IntN(2); k > 0; k-- {
			w += CatalogSyllables[g.rng.IntN(len(CatalogSyllables))]
		}
		g.vocab = append(g.vocab, w)
	}
	g.creators = make([]string, 20_000)
	for i := range g.creators {
		g.creators[i] = catalogTitle(g.vocab[g.rng.IntN(len(g.vocab))]) + " " + catalogSuffixes[g.rng.IntN(len(catalogSuffixes))]
	}
	return g
}

// zipf draws an index below size, the small ones far more often.
func (g *catalogGen) zipf(size int) int {
	u := g.rng.Float64()
	return int(float64(size) * u * u * u * u)
}

func (g *catalogGen) word() string { return g.vocab[g.zipf(len(g.vocab))] }

func catalogTitle(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// packageColumns are the columns of packageRow, in its order.
var packageColumns = []string{"id", "file_name", "file_size", "archive_type", "creator", "tags", "created_at", "package_group_id", "file_count"}

// packageRow draws package i (0-based; its id is i+1), and its entries of
// package_name_tokens as migration 039's trigger writes them: each token of
// four characters or more of its name, "" for one too long
// (hoard_listed_name_tokens), with its lower-cased creator.
func (g *catalogGen) packageRow(i int) (row []any, nameEntries [][]any) {
	rng, title, word := g.rng, catalogTitle, g.word
	c := g.creators[g.zipf(len(g.creators))]
	ext := catalogExts[rng.IntN(len(catalogExts))]
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
	if every := g.n / CatalogRareNames; every > 7 && i%every == 7 {
		name = "Quetzalcoatl Temple " + strconv.Itoa(i) + ".zip"
		if i/every%2 == 0 { // half by the most frequent creator: the rare word with it finds 4 at every size
			c = g.creators[0]
		}
	}
	id, created := int64(i+1), catalogEpoch.Add(time.Duration(i)*time.Minute)
	for _, t := range catalogTokens(name) {
		g.nameTokens[t] = struct{}{}
		if len(t) >= 4 || t == "" {
			nameEntries = append(nameEntries, []any{t, created, id, strings.ToLower(c)})
		}
	}
	return []any{id, name, int64(1<<20) + rng.Int64N(1<<30), catalogTypes[ext], c,
		[]string{catalogTags[rng.IntN(len(catalogTags))]}, created, catalogGroup(i), catalogFileCount(g.n, i+1)}, nameEntries
}

// catalogTokens are the tokens of a name as hoard_tokens(lower(name))
// (migration 035) gives them for the generator's ASCII names: its runs of
// letters and digits, lower-cased, each once, "" for one longer than 100.
func catalogTokens(name string) []string {
	var tokens []string
	for _, t := range strings.FieldsFunc(strings.ToLower(name), func(c rune) bool {
		return !('a' <= c && c <= 'z' || '0' <= c && c <= '9')
	}) {
		if len(t) > 100 {
			t = ""
		}
		if !slices.Contains(tokens, t) {
			tokens = append(tokens, t)
		}
	}
	return tokens
}

// fileColumns are the columns of fileRows, in its order.
var fileColumns = []string{"package_id", "ordinal", "path", "file_name", "extension"}

// fileRows draws the files of the p-th package that has some (0-based,
// newest first; catalogFileCount).
func (g *catalogGen) fileRows(p int) [][]any {
	pkg := int64(g.n - p*10)
	root := catalogTitle(g.word())
	var rows [][]any
	for f := range catalogFileCount(g.n, int(pkg)) {
		part := catalogParts[g.rng.IntN(len(catalogParts))]
		rows = append(rows, []any{pkg, f, fmt.Sprintf("%s/%s/%s_%02d.stl", root, g.word(), part, f), part + ".stl", "stl"})
	}
	return rows
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

// generateGroups stores the groups catalogGroup refers to for a catalog of
// n packages.
func generateGroups(ctx context.Context, conn *pgxpool.Conn, n int) error {
	var rows [][]any
	for i := 0; i < n; i += 3 * CatalogGroupSize {
		id := catalogGroup(i).(int64)
		rows = append(rows, []any{id, "Group " + strconv.FormatInt(id, 10), "AUTO_TIME"})
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"package_groups"}, []string{"id", "name", "grouping_source"}, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("copy groups: %w", err)
	}
	if _, err := conn.Exec(ctx, `SELECT setval(pg_get_serial_sequence('package_groups', 'id'), (SELECT max(id) FROM package_groups))`); err != nil {
		return fmt.Errorf("groups' sequence: %w", err)
	}
	return nil
}

// catalogFileCount is how many files GenerateCatalog lists for package id
// of n: 20 for the newest of every ten, none for the others.
func catalogFileCount(n, id int) int {
	if (n-id)%10 == 0 && (n-id)/10 < n/10 {
		return 20
	}
	return 0
}
