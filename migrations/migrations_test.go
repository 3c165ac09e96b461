package migrations_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/migrations"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) { storetest.Main(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func connect(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func TestMigrateTwiceChangesNothing(t *testing.T) {
	ctx := context.Background()
	pool := connect(t, storetest.EmptyURL(t))
	st, err := migrations.CurrentStatus(ctx, pool)
	if err != nil || st.Current != 0 || st.UpToDate() {
		t.Fatalf("empty database status = %+v, %v", st, err)
	}
	if err := migrations.Migrate(ctx, pool, quiet); err != nil {
		t.Fatalf("first migrate: %v", err)
	}
	before := schemaFingerprint(t, pool)
	if err := migrations.Migrate(ctx, pool, quiet); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	if after := schemaFingerprint(t, pool); after != before {
		t.Fatalf("second migrate changed the schema")
	}
	st, err = migrations.CurrentStatus(ctx, pool)
	if err != nil || !st.UpToDate() || st.Current != migrations.Latest() {
		t.Fatalf("status after migrate = %+v, %v", st, err)
	}
}

func TestConcurrentMigrate(t *testing.T) {
	ctx := context.Background()
	url := storetest.EmptyURL(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Separate pools: separate processes in production.
			pool, err := pgxpool.New(ctx, url)
			if err != nil {
				errs[i] = err
				return
			}
			defer pool.Close()
			errs[i] = migrations.Migrate(ctx, pool, quiet)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("migrator %d: %v", i, err)
		}
	}
}

func TestNewerDatabaseIsLeftAlone(t *testing.T) {
	ctx := context.Background()
	pool := connect(t, storetest.URL(t))
	if _, err := pool.Exec(ctx, `UPDATE public.hoard_schema_version SET version = version + 5`); err != nil {
		t.Fatal(err)
	}
	if err := migrations.Migrate(ctx, pool, quiet); err != nil {
		t.Fatalf("migrate against a newer schema: %v", err)
	}
	st, _ := migrations.CurrentStatus(ctx, pool)
	if st.Current != migrations.Latest()+5 || !st.UpToDate() {
		t.Fatalf("status = %+v", st)
	}
}

// TestSchemaNames checks the table and column names that tools and tests
// rely on (a contract, see the foundation issue).
func TestSchemaNames(t *testing.T) {
	ctx := context.Background()
	pool := connect(t, storetest.URL(t))
	want := map[string][]string{
		"packages": {"dest_channel_id", "dest_message_id", "dest_message_ids", "tags", "preview_data", "preview_msg_id",
			"content_hash", "remote_unique_id", "source_channel_id", "source_message_id", "source_topic_id",
			"reply_to_message_id", "source_caption", "creator", "file_name", "file_size", "archive_type", "part_count",
			"package_group_id", "created_at", "search_vector"},
		"package_files":        {"package_id", "path"},
		"package_groups":       {"name", "grouping_source", "preview_data", "source_channel_id"},
		"grouping_rules":       {"pattern", "channel_id", "signal_type", "confidence"},
		"system_notifications": {"type", "severity", "is_read", "dismissed", "context"},
		"messenger_channels":   {"title", "username", "platform_id", "category", "is_active", "auto_group_enabled", "kind", "is_forum"},
		"messenger_accounts":   {"is_premium", "auth_state"},
		"account_channel_maps": {"last_scanned_at", "last_scan_found_archives", "consecutive_empty_scans", "last_processed_message_id"},
		"topic_progress": {"last_scanned_at", "last_scan_found_archives", "consecutive_empty_scans",
			"last_processed_message_id", "fetch_enabled"},
		"ingestion_runs": {"status", "current_activity", "current_step", "current_topic_id", "current_account_channel_map_id",
			"started_at", "finished_at", "messages_scanned", "ingested"},
		"skipped_packages":    {"attempt_count", "reason", "last_error", "source_channel_id", "source_message_id"},
		"manual_uploads":      {"user_id", "status"},
		"manual_upload_files": {"upload_id", "status"},
		"invite_codes":        {"code", "max_uses", "expires_at", "use_count"},
		"users":               {"email", "password_hash", "role"},
		"sessions":            {"user_id", "expires_at"},
		"messenger_links":     {"user_id", "platform_user_id"},
		"bot_send_requests":   {"package_id", "status"},
		"bot_subscriptions":   {"pattern"},
		"crowdfund_hosts":     {"name"},
		"crowdfunds":          {"host_id", "delivery_status", "payment_status"},
		"crowdfund_packages":  {"crowdfund_id", "package_id"},
		"settings":            {"key", "value"},
	}
	for table, cols := range want {
		rows, err := pool.Query(ctx, `SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1`, table)
		if err != nil {
			t.Fatal(err)
		}
		var have []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				t.Fatal(err)
			}
			have = append(have, c)
		}
		if len(have) == 0 {
			t.Errorf("table %s is missing", table)
			continue
		}
		for _, c := range cols {
			if !slices.Contains(have, c) {
				t.Errorf("column %s.%s is missing", table, c)
			}
		}
	}
	// NOT NULL scan-state columns with defaults.
	var nullable int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.columns WHERE table_name IN ('account_channel_maps', 'topic_progress')
		AND column_name IN ('last_scanned_at', 'last_scan_found_archives', 'consecutive_empty_scans', 'fetch_enabled')
		AND (is_nullable = 'YES' OR column_default IS NULL)`).Scan(&nullable); err != nil || nullable != 0 {
		t.Errorf("scan-state columns nullable or without default: %d (%v)", nullable, err)
	}
	for _, table := range []string{"river_job", "river_leader", "river_migration", "river_queue"} {
		var ok bool
		if err := pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&ok); err != nil || !ok {
			t.Errorf("River table %s missing", table)
		}
	}
}

func TestSearchVectorFollowsFileName(t *testing.T) {
	ctx := context.Background()
	pool := connect(t, storetest.URL(t))
	db := store.New(pool)
	pkg := storetest.Package(t, db, storetest.PackageOpts{FileName: "Dragon_Bust_v2_supported.stl", FileSize: 1,
		ArchiveType: hoard.ArchiveDocument, Creator: "MammothFactory", Tags: []string{"Fantasy"}})
	id := pkg.ID
	matches := func(q string) bool {
		var ok bool
		if err := pool.QueryRow(ctx, `SELECT search_vector @@ websearch_to_tsquery('english', $2) FROM packages WHERE id = $1`, id, q).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, q := range []string{"dragon bust", "supported", "mammoth factory", "fantasy"} {
		if !matches(q) {
			t.Errorf("%q does not match Dragon_Bust_v2_supported.stl", q)
		}
	}
	// The unpublished row is completed in place under another name, as a
	// repair does: its id, creator and tags stay, its file name changes.
	renamed := *pkg
	renamed.FileName = "KnightHelmet.zip"
	if created, err := db.IndexPackage(ctx, &renamed, nil); err != nil || created || renamed.ID != id {
		t.Fatalf("index the package again: created %v, id %d (want %d), %v", created, renamed.ID, id, err)
	}
	if matches("dragon") || !matches("knight helmet") {
		t.Fatalf("search_vector not updated after the file name changed")
	}
	var weights string
	if err := pool.QueryRow(ctx, `SELECT search_vector::text FROM packages WHERE id = $1`, id).Scan(&weights); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(weights, "'knight':1A") || !strings.Contains(weights, "'mammoth':4B") {
		t.Fatalf("weights: name must be A, creator B: %s", weights)
	}
}

func TestSearchUsesGINIndex(t *testing.T) {
	ctx := context.Background()
	pool := connect(t, storetest.URL(t))
	if _, err := pool.Exec(ctx, `INSERT INTO packages (file_name, file_size, archive_type)
		SELECT 'Pack_' || i || CASE WHEN i % 500 = 0 THEN '_Dragon' ELSE '_Knight' END || '.zip', i, 'ZIP'
		FROM generate_series(1, 20000) i`); err != nil {
		t.Fatal(err)
	}
	storetest.Analyze(t, store.New(pool), "packages")
	for query, index := range map[string]string{
		`EXPLAIN SELECT id FROM packages WHERE search_vector @@ websearch_to_tsquery('english', 'dragon')`: "packages_creator_search_idx",
		`EXPLAIN SELECT id FROM packages WHERE file_name ILIKE '%drag%'`:                                   "packages_file_name_trgm_idx",
	} {
		rows, err := pool.Query(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		var plan strings.Builder
		for rows.Next() {
			var line string
			_ = rows.Scan(&line)
			plan.WriteString(line + "\n")
		}
		if !strings.Contains(plan.String(), index) {
			t.Errorf("%s\ndoes not use %s:\n%s", query, index, plan.String())
		}
	}
}

// schemaFingerprint summarises tables, columns and indexes.
func schemaFingerprint(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var s string
	err := pool.QueryRow(context.Background(), `SELECT string_agg(x, ',' ORDER BY x) FROM (
		SELECT table_name || '.' || column_name || ':' || data_type AS x FROM information_schema.columns WHERE table_schema = 'public'
		UNION ALL SELECT indexname FROM pg_indexes WHERE schemaname = 'public'
		UNION ALL SELECT 'v' || version FROM public.hoard_schema_version
		UNION ALL SELECT 'r' || version FROM river_migration) q`).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
