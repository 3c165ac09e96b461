package storetest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"
)

// catalogTables are the tables GenerateCatalog loads in bulk: their
// indexes and primary and unique keys, and the foreign keys from and to
// them, are dropped before the load and built again after it.
var catalogTables = []string{"packages", "package_files", "package_paths", "package_words", "package_creator_words", "path_tokens", "name_tokens", "package_name_tokens"}

// catalogTriggers are the row triggers (table, trigger) whose work the
// bulk load does itself, set-wise: they are off while it loads.
var catalogTriggers = [][2]string{
	{"packages", "packages_search_vector_trg"},
	{"packages", "packages_catalog_names"},
	{"packages", "packages_words_insert"},
	{"packages", "packages_creator_words_insert"},
	{"packages", "packages_name_tokens_insert"},
	{"packages", "packages_name_token_entries_insert"},
	{"package_files", "package_files_paths_insert"},
}

const (
	// catalogWorkers is how many statements of the rebuild run at once:
	// one more than the machine's two cores, so that a task waiting on
	// disk leaves no core idle.
	catalogWorkers = 3
)

// catalogBatch is how many packages are staged at a time (a variable: the
// test loads in several small batches).
var catalogBatch = 250_000

// generateCatalog is GenerateCatalog, with errors returned.
func generateCatalog(ctx context.Context, pool *pgxpool.Pool, n int, logf func(string, ...any)) (string, error) {
	start := time.Now()
	lp, err := catalogLoadPool(ctx, pool)
	if err != nil {
		return "", err
	}
	defer lp.Close()
	g := newCatalogGen(n)
	schema, err := loadCatalogRows(ctx, lp, g)
	if err != nil {
		return "", err
	}
	loaded := time.Since(start)
	times, err := runCatalogTasks(ctx, lp, catalogWorkers, catalogTasks(g, schema))
	if err != nil {
		return "", fmt.Errorf("rebuild: %w", err)
	}
	if err := setCatalogTriggers(ctx, lp, true); err != nil {
		return "", err
	}
	// The rows came with their ids: new packages continue after them.
	if _, err := lp.Exec(ctx, `SELECT setval(pg_get_serial_sequence('packages', 'id'), (SELECT max(id) FROM packages))`); err != nil {
		return "", fmt.Errorf("packages' sequence: %w", err)
	}
	var top string
	if err := lp.QueryRow(ctx, `SELECT creator FROM packages GROUP BY creator ORDER BY count(*) DESC LIMIT 1`).Scan(&top); err != nil {
		return "", fmt.Errorf("most frequent creator: %w", err)
	}
	logf("catalog of %d packages in %s: rows %s, then %d statements on %d connections, the longest %s",
		n, time.Since(start).Round(time.Second), loaded.Round(time.Second), len(times), catalogWorkers, longestTasks(times, 6))
	return top, nil
}

// catalogLoadPool opens connections of GenerateCatalog's own to pool's
// database, with the memory that building big indexes and sorting want
// (which the service's connections need not have), and commits that do
// not wait for the WAL.
func catalogLoadPool(ctx context.Context, pool *pgxpool.Pool) (*pgxpool.Pool, error) {
	cfg := pool.Config()
	cfg.MaxConns, cfg.MinConns = catalogWorkers, 0
	for k, v := range map[string]string{"maintenance_work_mem": "512MB", "work_mem": "256MB", "synchronous_commit": "off"} {
		cfg.ConnConfig.RuntimeParams[k] = v
	}
	lp, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open loading connections: %w", err)
	}
	return lp, nil
}

// loadCatalogRows drops the indexes and keys of the catalog's tables (and
// returns what they were), turns the row triggers off and loads the groups
// and the packages.
func loadCatalogRows(ctx context.Context, pool *pgxpool.Pool, g *catalogGen) (*catalogSchema, error) {
	schema, err := clearCatalogSchema(ctx, pool, g)
	if err != nil {
		return nil, err
	}
	if err := loadPackages(ctx, pool, g); err != nil {
		return nil, err
	}
	return schema, nil
}

// clearCatalogSchema captures and drops the indexes and keys of the
// catalog's tables, turns the row triggers off and loads the groups.
func clearCatalogSchema(ctx context.Context, pool *pgxpool.Pool, g *catalogGen) (*catalogSchema, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer conn.Release()
	schema, err := captureCatalogSchema(ctx, conn)
	if err != nil {
		return nil, err
	}
	if err := schema.drop(ctx, conn); err != nil {
		return nil, err
	}
	if err := setCatalogTriggers(ctx, pool, false); err != nil {
		return nil, err
	}
	return schema, generateGroups(ctx, conn, g.n)
}

// setCatalogTriggers turns catalogTriggers on or off.
func setCatalogTriggers(ctx context.Context, pool *pgxpool.Pool, on bool) error {
	verb := "DISABLE"
	if on {
		verb = "ENABLE"
	}
	for _, t := range catalogTriggers {
		if _, err := pool.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s %s TRIGGER %s`, pgx.Identifier{t[0]}.Sanitize(), verb, pgx.Identifier{t[1]}.Sanitize())); err != nil {
			return fmt.Errorf("%s trigger %s: %w", strings.ToLower(verb), t[1], err)
		}
	}
	return nil
}

// stagedPackages gives the packages of a staging table the search vector
// packages_search_vector_trg (migration 003) would give them: the same
// expression, here set-wise, where the trigger's PL/pgSQL calls
// hoard_search_text once per column and row (three times slower).
const stagedPackages = `
SELECT id, file_name, file_size, archive_type, creator, tags, created_at, package_group_id, file_count,
	setweight(to_tsvector('english', coalesce(hoard_search_text(file_name), '')), 'A') ||
	setweight(to_tsvector('english', coalesce(hoard_search_text(creator), '')), 'B') ||
	setweight(to_tsvector('english', coalesce(hoard_search_text(array_to_string(tags, ' ')), '')), 'B') ||
	setweight(to_tsvector('english', coalesce(source_caption, '')), 'C') AS search_vector
FROM (SELECT *, NULL::text AS source_caption FROM catalog_load) AS staged`

// loadPackages draws g's packages and loads them, catalogBatch at a time:
// each batch is copied into a staging table of its own and given its
// search vectors there (stageBatch, on up to catalogWorkers connections at
// once: the vectors are most of the load's work), then the batches move
// into packages in id order, so that the table's rows lie in the order
// one-by-one inserts would have left them (the planner's correlation of
// ids and dates depends on it).
func loadPackages(ctx context.Context, pool *pgxpool.Pool, g *catalogGen) error {
	batches := (g.n + catalogBatch - 1) / catalogBatch
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(catalogWorkers)
	for k := range batches {
		// Drawn here, in order: the generator's random source is one.
		start, end := k*catalogBatch, min((k+1)*catalogBatch, g.n)
		rows, entries := make([][]any, 0, end-start), make([][]any, 0, 3*(end-start))
		for i := start; i < end; i++ {
			row, nameEntries := g.packageRow(i)
			rows, entries = append(rows, row), append(entries, nameEntries...)
		}
		eg.Go(func() error { return stageBatch(ectx, pool, k, rows, entries) })
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	for k := range batches {
		table := stageTable(k)
		if _, err := pool.Exec(ctx, `INSERT INTO packages (`+strings.Join(packageColumns, ", ")+`, search_vector)
			OVERRIDING SYSTEM VALUE SELECT * FROM `+table+` ORDER BY id`); err != nil {
			return fmt.Errorf("insert packages: %w", err)
		}
		if _, err := pool.Exec(ctx, `DROP TABLE `+table); err != nil {
			return fmt.Errorf("drop staged packages: %w", err)
		}
	}
	return nil
}

// stageTable names the staging table of batch k.
func stageTable(k int) string {
	return pgx.Identifier{fmt.Sprintf("catalog_stage_%d", k)}.Sanitize()
}

// stageBatch copies rows into a temporary table of a connection of its
// own, and from there, with their search vectors (stagedPackages), into
// batch k's staging table, which other connections can read; and the
// entries of their names' tokens (packageRow) into package_name_tokens.
func stageBatch(ctx context.Context, pool *pgxpool.Pool, k int, rows, nameEntries [][]any) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("stage packages: %w", err)
	}
	defer conn.Release()
	table := stageTable(k)
	for _, stmt := range []string{
		`DROP TABLE IF EXISTS ` + table,
		`CREATE TEMP TABLE catalog_load (id BIGINT, file_name TEXT, file_size BIGINT, archive_type TEXT,
			creator TEXT, tags TEXT[], created_at TIMESTAMPTZ, package_group_id BIGINT, file_count INTEGER)`,
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("stage packages: %w", err)
		}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"catalog_load"}, packageColumns, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("copy packages: %w", err)
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"package_name_tokens"}, []string{"token", "created_at", "package_id", "creator"},
		pgx.CopyFromRows(nameEntries)); err != nil {
		return fmt.Errorf("copy name tokens: %w", err)
	}
	for _, stmt := range []string{`CREATE UNLOGGED TABLE ` + table + ` AS ` + stagedPackages, `DROP TABLE catalog_load`} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("stage packages: %w", err)
		}
	}
	return nil
}

// loadFiles draws g's package files (after its packages: the same random
// source) and copies them into package_files, then fills package_paths
// from them, with their packages' creators, as migrations 021 and 034 do
// (their trigger would, per statement, for the packages the statement
// touched). Not by calling hoard_package_paths_of for every package:
// its `= ANY(ids)` over a parameter is tested id by id, which took the
// fill from 0.9 to 4.3 s at 100,000 packages (and grows with the square).
func loadFiles(ctx context.Context, conn *pgxpool.Conn, g *catalogGen) error {
	p, pending := 0, [][]any(nil)
	rows := pgx.CopyFromFunc(func() ([]any, error) {
		for len(pending) == 0 {
			if p >= g.n/10 {
				return nil, nil
			}
			pending, p = g.fileRows(p), p+1
		}
		row := pending[0]
		pending = pending[1:]
		return row, nil
	})
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"package_files"}, fileColumns, rows); err != nil {
		return fmt.Errorf("copy files: %w", err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO package_paths (package_id, chunk, paths, creator)
		SELECT f.package_id, f.ordinal / 256, lower(string_agg(f.path, E'\n' ORDER BY f.ordinal)), lower(min(p.creator))
		FROM package_files f JOIN packages p ON p.id = f.package_id
		GROUP BY f.package_id, f.ordinal / 256`); err != nil {
		return fmt.Errorf("fill package_paths: %w", err)
	}
	return nil
}

// insertPackageWords fills package_words for the packages in an id range
// ($1, $2] as the trigger of migration 023 does through hoard_words_of,
// here with that function's expression inlined: PostgreSQL cannot inline
// a STRICT set-returning function, and calling it per package takes
// twice as long.
const insertPackageWords = `
INSERT INTO package_words (word, created_at, package_id, rank)
SELECT w, p.created_at, p.id, ts_rank(p.search_vector, ('''' || replace(replace(w, '\', '\\'), '''', '''''') || '''')::tsquery)
FROM packages p, unnest(tsvector_to_array(p.search_vector)) AS w
WHERE p.id > $1 AND p.id <= $2`

// catalogIndex is an index of one of catalogTables.
type catalogIndex struct {
	table, name string // as SQL identifiers
	create      string
	constraint  string   // "PRIMARY KEY" or "UNIQUE" for a key's index, else empty
	conname     string   // the key's name, as an SQL identifier
	stats       []string // statements that set its columns' statistics targets
}

// catalogFKey is a foreign key from or to one of catalogTables.
type catalogFKey struct {
	table, name, def, refTable string
}

// catalogSchema is what GenerateCatalog drops before its load and
// restores after it.
type catalogSchema struct {
	indexes []catalogIndex
	fkeys   []catalogFKey
}

// captureCatalogSchema reads the definitions of the indexes, keys and
// foreign keys of catalogTables from PostgreSQL's catalog.
func captureCatalogSchema(ctx context.Context, conn *pgxpool.Conn) (*catalogSchema, error) {
	rows, err := conn.Query(ctx, `
		SELECT t.oid::regclass::text, x.indexrelid::regclass::text, pg_get_indexdef(x.indexrelid),
			CASE c.contype WHEN 'p' THEN 'PRIMARY KEY' WHEN 'u' THEN 'UNIQUE' ELSE '' END, coalesce(quote_ident(c.conname), ''),
			ARRAY(SELECT format('ALTER INDEX %s ALTER COLUMN %s SET STATISTICS %s', x.indexrelid::regclass, a.attnum, a.attstattarget)
				FROM pg_attribute a WHERE a.attrelid = x.indexrelid AND a.attstattarget >= 0 ORDER BY a.attnum)
		FROM pg_index x
		JOIN pg_class t ON t.oid = x.indrelid
		LEFT JOIN pg_constraint c ON c.conindid = x.indexrelid AND c.conrelid = x.indrelid AND c.contype IN ('p', 'u')
		WHERE t.relname = ANY ($1) AND pg_table_is_visible(t.oid)
		ORDER BY 1, 2`, catalogTables)
	if err != nil {
		return nil, fmt.Errorf("read indexes: %w", err)
	}
	s := &catalogSchema{}
	s.indexes, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (x catalogIndex, err error) {
		return x, r.Scan(&x.table, &x.name, &x.create, &x.constraint, &x.conname, &x.stats)
	})
	if err != nil {
		return nil, fmt.Errorf("read indexes: %w", err)
	}
	rows, err = conn.Query(ctx, `
		SELECT conrelid::regclass::text, quote_ident(conname), pg_get_constraintdef(oid), confrelid::regclass::text
		FROM pg_constraint
		WHERE contype = 'f' AND (conrelid::regclass::text = ANY ($1) OR confrelid::regclass::text = ANY ($1))
		ORDER BY 1, 2`, catalogTables)
	if err != nil {
		return nil, fmt.Errorf("read foreign keys: %w", err)
	}
	s.fkeys, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (f catalogFKey, err error) {
		return f, r.Scan(&f.table, &f.name, &f.def, &f.refTable)
	})
	if err != nil {
		return nil, fmt.Errorf("read foreign keys: %w", err)
	}
	return s, nil
}

// drop drops the foreign keys, then the keys, then the other indexes.
func (s *catalogSchema) drop(ctx context.Context, conn *pgxpool.Conn) error {
	var stmts []string
	for _, f := range s.fkeys {
		stmts = append(stmts, fmt.Sprintf(`ALTER TABLE %s DROP CONSTRAINT %s`, f.table, f.name))
	}
	for _, x := range s.indexes {
		if x.constraint != "" {
			stmts = append(stmts, fmt.Sprintf(`ALTER TABLE %s DROP CONSTRAINT %s`, x.table, x.conname))
		}
	}
	for _, x := range s.indexes {
		if x.constraint == "" {
			stmts = append(stmts, `DROP INDEX `+x.name)
		}
	}
	for _, stmt := range stmts {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return nil
}

// indexCost ranks an index by how long it takes to build, the longest
// highest: GIN on a function's result, on trigrams, other GIN, B-trees.
func indexCost(x catalogIndex) int {
	switch {
	case strings.Contains(x.create, "USING gin (hoard_"):
		return 3
	case strings.Contains(x.create, "gin_trgm_ops"):
		return 2
	case strings.Contains(x.create, "USING gin"):
		return 1
	}
	return 0
}

// catalogTask is one step of the rebuild after the load: it runs once the
// tasks named in deps are done, on a connection of its own.
type catalogTask struct {
	name string
	deps []string
	run  func(ctx context.Context, conn *pgxpool.Conn) error
}

// execTask is a task that executes stmts in turn.
func execTask(name string, deps []string, stmts ...string) catalogTask {
	return catalogTask{name: name, deps: deps, run: func(ctx context.Context, conn *pgxpool.Conn) error {
		for _, stmt := range stmts {
			if _, err := conn.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
		}
		return nil
	}}
}

// catalogTasks lists what follows the load of g's packages, in the order
// runCatalogTasks starts ready tasks: the GIN indexes on functions'
// results (the names' pieces take longest), the files and paths (with the
// paths' tokens; then their indexes, the longest chain after those), the
// rest of packages' indexes and its ANALYZE (45 s at 1,000,000, which waits
// for all of them: last, they held it back by 31 s), package_words in two
// halves and from it package_creator_words (which the trigger wrote row
// by row into its index: 3 min 16 s of the 3 min 43 s the packages' rows
// took at 1,000,000), the names' tokens, the other tables' indexes, the
// catalogs of creators and tags, then each table's statistics, keys and
// foreign keys (catalogKeyTasks) and a last VACUUM (vacuumTasks).
func catalogTasks(g *catalogGen, schema *catalogSchema) []catalogTask {
	files, load := catalogLoads(g)
	// path_tokens is filled by its statement trigger on package_paths.
	loadedBy := map[string][]string{"package_files": {"files"}, "package_paths": {"files"}, "path_tokens": {"files"},
		"package_words": {"words 1", "words 2"}, "package_creator_words": {"creator words"}, "name_tokens": {"name tokens"}}
	indexes := slices.Clone(schema.indexes)
	slices.SortStableFunc(indexes, func(a, b catalogIndex) int { return cmp.Compare(indexCost(b), indexCost(a)) })
	var tasks []catalogTask
	built := map[string][]string{} // table → its index tasks
	index := func(which func(catalogIndex) bool) {
		for _, x := range indexes {
			if which(x) {
				tasks = append(tasks, execTask("index "+x.name, loadedBy[x.table], x.create))
				built[x.table] = append(built[x.table], "index "+x.name)
			}
		}
	}
	heavy := func(x catalogIndex) bool { return indexCost(x) == 3 }
	ofPackages := func(x catalogIndex) bool { return !heavy(x) && x.table == "packages" }
	// The GIN indexes on functions' results first, the files, then the
	// other indexes of packages and its ANALYZE (the longest task after
	// the names' pieces' index, which waits for all of them).
	index(heavy)
	tasks = append(tasks, files)
	index(ofPackages)
	tasks = append(tasks, analyzeTask(schema, "packages", built["packages"]))
	tasks = append(tasks, load...)
	index(func(x catalogIndex) bool { return !heavy(x) && !ofPackages(x) })
	tasks = append(tasks, execTask("creators and tags", nil,
		`INSERT INTO catalog_creators (creator) SELECT DISTINCT creator FROM packages WHERE coalesce(creator, '') <> '' ON CONFLICT DO NOTHING`,
		`INSERT INTO catalog_tags (tag) SELECT DISTINCT t FROM packages, unnest(tags) AS t WHERE t <> '' ON CONFLICT DO NOTHING`))
	for _, t := range catalogTables {
		if t != "packages" { // analyzed above
			tasks = append(tasks, analyzeTask(schema, t, built[t]))
		}
	}
	// The tasks that read a table other than the one they fill: its keys
	// (ALTER TABLE, an exclusive lock) wait for them, not they for it.
	readBy := map[string][]string{
		"packages":      {"words 1", "words 2", "files", "creator words", "creators and tags"},
		"package_words": {"creator words"},
	}
	tasks = append(tasks, catalogKeyTasks(schema, readBy)...)
	return append(tasks, vacuumTasks(tasks)...)
}

// catalogLoads lists the tasks that fill the tables derived from g's
// packages: the files and paths (with the paths' tokens), package_words in
// two halves and from it package_creator_words, and the names' tokens.
func catalogLoads(g *catalogGen) (files catalogTask, load []catalogTask) {
	half := int64(g.n / 2)
	files = catalogTask{name: "files", run: func(ctx context.Context, conn *pgxpool.Conn) error { return loadFiles(ctx, conn, g) }}
	load = []catalogTask{
		{name: "words 1", run: func(ctx context.Context, conn *pgxpool.Conn) error {
			_, err := conn.Exec(ctx, insertPackageWords, 0, half)
			return err
		}},
		{name: "words 2", run: func(ctx context.Context, conn *pgxpool.Conn) error {
			_, err := conn.Exec(ctx, insertPackageWords, half, int64(g.n))
			return err
		}},
		// Gathered while the names were drawn: computing them again from
		// the names took 31 s at 1,000,000 packages.
		{name: "name tokens", run: func(ctx context.Context, conn *pgxpool.Conn) error {
			tokens := slices.Sorted(maps.Keys(g.nameTokens))
			rows := make([][]any, len(tokens))
			for i, t := range tokens {
				rows[i] = []any{t}
			}
			_, err := conn.CopyFrom(ctx, pgx.Identifier{"name_tokens"}, []string{"token"}, pgx.CopyFromRows(rows))
			return err
		}},
		// As migration 032 fills it: a creator's words are the package's.
		execTask("creator words", []string{"words 1", "words 2"}, `INSERT INTO package_creator_words (creator, word, created_at, package_id, rank)
			SELECT lower(p.creator), w.word, w.created_at, w.package_id, w.rank
			FROM package_words w JOIN packages p ON p.id = w.package_id
			WHERE p.creator IS NOT NULL`),
	}
	return files, load
}

// catalogKeyTasks lists the tasks that follow each table's ANALYZE: its
// keys, which take over their indexes with an exclusive lock, once the
// tasks of readBy that read the table are done too (at 10,000,000 packages
// the keys of packages, waiting for the paths' fill to release the table,
// held back its ANALYZE by minutes), and once both sides' keys are
// in, each foreign key.
func catalogKeyTasks(schema *catalogSchema, readBy map[string][]string) []catalogTask {
	var keys, fkeys []catalogTask
	for _, t := range catalogTables {
		var stmts []string
		for _, x := range schema.indexes {
			if x.table == t && x.constraint != "" {
				stmts = append(stmts, fmt.Sprintf(`ALTER TABLE %s ADD CONSTRAINT %s %s USING INDEX %s`, x.table, x.conname, x.constraint, x.name))
			}
		}
		keys = append(keys, execTask("keys "+t, append([]string{"analyze " + t}, readBy[t]...), stmts...))
	}
	for _, f := range schema.fkeys {
		var deps []string
		for _, t := range []string{f.table, f.refTable} {
			if slices.Contains(catalogTables, t) {
				deps = append(deps, "keys "+t)
			}
		}
		fkeys = append(fkeys, execTask("foreign key "+f.name, deps, fmt.Sprintf(`ALTER TABLE %s ADD CONSTRAINT %s %s`, f.table, f.name, f.def)))
	}
	return append(keys, fkeys...)
}

// vacuumTasks lists a VACUUM of each of catalogTables (and a VACUUM
// ANALYZE of package_groups, written row by row during the load) that runs
// once every task of before is done: index-only reads of package_words
// need its visibility map, and a VACUUM beside a statement that began
// before a table's rows were written (a long CREATE INDEX) cannot mark
// their pages visible to all (at 10,000,000 packages this VACUUM still
// found 16 s of work in package_words and package_creator_words each).
func vacuumTasks(before []catalogTask) []catalogTask {
	all := make([]string, len(before))
	for i, t := range before {
		all[i] = t.name
	}
	var vacuums []catalogTask
	for _, t := range catalogTables {
		vacuums = append(vacuums, execTask("vacuum "+t, all, `VACUUM `+t))
	}
	return append(vacuums, execTask("vacuum package_groups", all, `VACUUM ANALYZE package_groups`))
}

// analyzeTask sets the statistics targets of table's indexes in schema
// and analyzes it, once the index tasks built are done: ANALYZE gathers
// the statistics of the indexes' expressions.
func analyzeTask(schema *catalogSchema, table string, built []string) catalogTask {
	var stmts []string
	for _, x := range schema.indexes {
		if x.table == table {
			stmts = append(stmts, x.stats...)
		}
	}
	return execTask("analyze "+table, built, append(stmts, `ANALYZE `+table)...)
}

// runCatalogTasks runs tasks on up to workers connections of pool at once,
// each once the tasks it depends on are done (a task may depend only on
// tasks before it in the list), the ready ones in the order of the list.
// The first error cancels the rest. It returns how long each task took.
func runCatalogTasks(ctx context.Context, pool *pgxpool.Pool, workers int, tasks []catalogTask) (map[string]time.Duration, error) {
	seen := map[string]bool{}
	for _, t := range tasks {
		for _, d := range t.deps {
			if !seen[d] {
				return nil, fmt.Errorf("task %q depends on %q, which is not before it", t.name, d)
			}
		}
		seen[t.name] = true
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		changed = sync.NewCond(&mu)
		started = make([]bool, len(tasks))
		done    = map[string]bool{}
		times   = map[string]time.Duration{}
		failed  error
	)
	// next claims the first ready task, waiting for one while tasks that
	// may make one ready run; -1 when none is left (or one failed).
	next := func() int {
		for failed == nil {
			left := false
			for i, t := range tasks {
				if started[i] {
					continue
				}
				left = true
				if !slices.ContainsFunc(t.deps, func(d string) bool { return !done[d] }) {
					started[i] = true
					return i
				}
			}
			if !left {
				return -1
			}
			changed.Wait()
		}
		return -1
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			mu.Lock()
			defer mu.Unlock()
			for i := next(); i >= 0; i = next() {
				mu.Unlock()
				t, start := tasks[i], time.Now()
				err := runCatalogTask(ctx, pool, t)
				mu.Lock()
				times[t.name], done[t.name] = time.Since(start), err == nil
				if err != nil && failed == nil {
					failed = fmt.Errorf("%s: %w", t.name, err)
					cancel()
				}
				changed.Broadcast()
			}
		})
	}
	wg.Wait()
	return times, failed
}

// runCatalogTask runs t on a connection of pool.
func runCatalogTask(ctx context.Context, pool *pgxpool.Pool, t catalogTask) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Release()
	return t.run(ctx, conn)
}

// longestTasks lists the k longest of times, the longest first.
func longestTasks(times map[string]time.Duration, k int) string {
	names := make([]string, 0, len(times))
	for name := range times {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(times[b], times[a]) })
	var out []string
	for _, name := range names[:min(k, len(names))] {
		out = append(out, fmt.Sprintf("%s %s", name, times[name].Round(100*time.Millisecond)))
	}
	return strings.Join(out, ", ")
}
