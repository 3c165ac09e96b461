package storetest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// catalogPackagesMD5 is the checksum of a generated catalog of 3,000
// packages (catalogRowsMD5), as the generator made them since its rare
// word went into CatalogRareNames names at every size (issue #30; before,
// one in 100,000): benchmark figures stay comparable only while the
// catalog is the same.
const catalogPackagesMD5 = "f36b957e915ce1c8de76e251bead74f9"

// TestGenerateCatalog checks that the bulk load gives what inserting the
// packages one by one would: the rows of the generator before it, the
// schema of a freshly migrated database (indexes, keys, foreign keys,
// statistics targets, triggers on), and the data the triggers derive
// (search vectors, package_words, package_paths, the tokens of paths and
// names, the names' token entries, creators and tags).
func TestGenerateCatalog(t *testing.T) {
	ctx := context.Background()
	fresh, db := NewDB(t), NewDB(t)
	const n = 3000
	layout := func(db *store.DB) []int64 { // the packages' ids in the order the table holds them
		var ids []int64
		if err := db.Pool().QueryRow(ctx, `SELECT array_agg(id ORDER BY ctid) FROM packages`).Scan(&ids); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	oneBatch := NewDB(t)
	GenerateCatalog(t, oneBatch.Pool(), n)
	defer func(b int) { catalogBatch = b }(catalogBatch)
	catalogBatch = 700 // five batches, staged at once on several connections
	top := GenerateCatalog(t, db.Pool(), n)
	if top == "" {
		t.Error("no most frequent creator")
	}
	if diff := cmp.Diff(layout(oneBatch), layout(db)); diff != "" {
		t.Errorf("the packages lie in another order when loaded in batches (-one batch +five):\n%s", diff)
	}
	var sum string
	if err := db.Pool().QueryRow(ctx, catalogRowsMD5, 3000).Scan(&sum); err != nil {
		t.Fatal(err)
	}
	if sum != catalogPackagesMD5 {
		t.Errorf("packages' checksum %s, want %s (the generator draws another catalog)", sum, catalogPackagesMD5)
	}
	type rareNames struct{ All, ByTop int }
	var rare rareNames
	if err := db.Pool().QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE creator = $1) FROM packages
		WHERE search_vector @@ to_tsquery('english', 'quetzalcoatl')`, top).Scan(&rare.All, &rare.ByTop); err != nil {
		t.Fatal(err)
	}
	if want := (rareNames{CatalogRareNames, CatalogRareNames / 2}); rare != want {
		t.Errorf("names that hold the rare word %+v, want %+v (half by the most frequent creator)", rare, want)
	}
	for table, want := range map[string]int{"packages": n, "package_files": n / 10 * 20, "package_paths": n / 10, "package_groups": n / 30} {
		var got int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: %d rows, want %d", table, got, want)
		}
	}
	if got, want := catalogSchemaText(t, db.Pool()), catalogSchemaText(t, fresh.Pool()); got != want {
		t.Errorf("schema after the load:\n%s\nwant (freshly migrated):\n%s", got, want)
	}
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// In the transaction, rolled back: the search vectors' check last,
	// its update makes the triggers rewrite package_words.
	for _, c := range []struct{ name, prepare, mismatches string }{
		{"package_words", ``, `SELECT count(*) FROM (
			(SELECT word, created_at, package_id, rank FROM package_words
			 EXCEPT ALL SELECT w.word, p.created_at, p.id, w.rank FROM packages p, hoard_words_of(p.search_vector) AS w)
			UNION ALL
			(SELECT w.word, p.created_at, p.id, w.rank FROM packages p, hoard_words_of(p.search_vector) AS w
			 EXCEPT ALL SELECT word, created_at, package_id, rank FROM package_words)) AS d`},
		{"package_creator_words", ``, `SELECT count(*) FROM (
			(SELECT creator, word, created_at, package_id, rank FROM package_creator_words
			 EXCEPT ALL SELECT lower(p.creator), w.word, p.created_at, p.id, w.rank FROM packages p, hoard_words_of(p.search_vector) AS w WHERE p.creator IS NOT NULL)
			UNION ALL
			(SELECT lower(p.creator), w.word, p.created_at, p.id, w.rank FROM packages p, hoard_words_of(p.search_vector) AS w WHERE p.creator IS NOT NULL
			 EXCEPT ALL SELECT creator, word, created_at, package_id, rank FROM package_creator_words)) AS d`},
		{"package_paths", `CREATE TEMP TABLE loaded_paths AS SELECT * FROM package_paths;
			SELECT hoard_package_paths_of(ARRAY(SELECT DISTINCT package_id FROM package_files))`,
			`SELECT count(*) FROM ((TABLE package_paths EXCEPT ALL TABLE loaded_paths) UNION ALL (TABLE loaded_paths EXCEPT ALL TABLE package_paths)) AS d`},
		{"path tokens", ``, `SELECT count(*) FROM (
			((SELECT DISTINCT t FROM package_paths, unnest(tokens) AS t) EXCEPT ALL SELECT token FROM path_tokens)
			UNION ALL (SELECT token FROM path_tokens EXCEPT ALL SELECT DISTINCT t FROM package_paths, unnest(tokens) AS t)) AS d`},
		{"name tokens", ``, `SELECT count(*) FROM (
			((SELECT DISTINCT t FROM packages, unnest(hoard_tokens(lower(file_name))) AS t) EXCEPT ALL SELECT token FROM name_tokens)
			UNION ALL (SELECT token FROM name_tokens EXCEPT ALL SELECT DISTINCT t FROM packages, unnest(hoard_tokens(lower(file_name))) AS t)) AS d`},
		{"package_name_tokens", ``, `SELECT count(*) FROM (
			(SELECT token, created_at, package_id, creator FROM package_name_tokens
			 EXCEPT ALL SELECT t, p.created_at, p.id, lower(p.creator) FROM packages p, unnest(hoard_listed_name_tokens(p.file_name)) AS t)
			UNION ALL
			(SELECT t, p.created_at, p.id, lower(p.creator) FROM packages p, unnest(hoard_listed_name_tokens(p.file_name)) AS t
			 EXCEPT ALL SELECT token, created_at, package_id, creator FROM package_name_tokens)) AS d`},
		{"creators", ``, `SELECT count(*) FROM ((SELECT DISTINCT creator FROM packages) EXCEPT ALL SELECT creator FROM catalog_creators) AS d`},
		{"tags", ``, `SELECT count(*) FROM ((SELECT DISTINCT t FROM packages, unnest(tags) AS t) EXCEPT ALL SELECT tag FROM catalog_tags) AS d`},
		{"search vectors", `CREATE TEMP TABLE loaded AS SELECT id, search_vector FROM packages;
			UPDATE packages SET file_name = file_name`,
			`SELECT count(*) FROM packages p JOIN loaded l USING (id) WHERE p.search_vector IS DISTINCT FROM l.search_vector`},
	} {
		if c.prepare != "" {
			if _, err := tx.Exec(ctx, c.prepare); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		var bad int
		if err := tx.QueryRow(ctx, c.mismatches).Scan(&bad); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if bad != 0 {
			t.Errorf("%s: %d rows differ from what the triggers give", c.name, bad)
		}
	}
}

// catalogRowsMD5 is a checksum of the columns GenerateCatalog draws of the
// packages with ids up to $1.
const catalogRowsMD5 = `SELECT md5(string_agg(concat_ws('|', id, file_name, creator, file_size, archive_type, array_to_string(tags, ','),
	extract(epoch FROM created_at)::bigint, package_group_id, file_count), ',' ORDER BY id)) FROM packages WHERE id <= $1`

// catalogSchemaText lists the indexes, constraints, triggers and
// statistics targets of the catalog's tables in pool's database.
func catalogSchemaText(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var s string
	err := pool.QueryRow(context.Background(), `
		WITH tables AS (SELECT oid FROM pg_class WHERE relname = ANY ($1) AND pg_table_is_visible(oid))
		SELECT string_agg(d, E'\n' ORDER BY d) FROM (
			SELECT pg_get_indexdef(indexrelid) AS d FROM pg_index WHERE indrelid IN (TABLE tables)
			UNION ALL
			SELECT format('%s %s %s valid=%s', conrelid::regclass, conname, pg_get_constraintdef(oid), convalidated)
			FROM pg_constraint WHERE conrelid IN (TABLE tables) OR confrelid IN (TABLE tables)
			UNION ALL
			SELECT format('trigger %s %s %s', tgrelid::regclass, tgname, tgenabled) FROM pg_trigger WHERE tgrelid IN (TABLE tables) AND NOT tgisinternal
			UNION ALL
			SELECT format('statistics %s %s %s', attrelid::regclass, attname, attstattarget) FROM pg_attribute
			WHERE attnum > 0 AND attstattarget >= 0
				AND (attrelid IN (TABLE tables) OR attrelid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN (TABLE tables)))
		) AS s`, append(catalogTables, "package_groups", "catalog_creators", "catalog_tags")).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
