package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
)

// More readers: whole rows of the tables a test checks at the end, read
// through store's own finders, oldest first. A row deleted while a reader
// reads (a skipped record the worker just resolved, say) is left out
// rather than failing the test: the readers may run beside a live process.

// each reads the rows of table one by one with find, leaving out the ones
// gone since their ids were read.
func each[T any](t testing.TB, db *store.DB, table string, find func(context.Context, int64) (*T, error)) []T {
	t.Helper()
	var out []T
	for _, id := range ids(t, db, table) {
		row, err := find(context.Background(), id)
		if hoard.ErrorCode(err) == hoard.ENOTFOUND {
			continue
		}
		if err != nil {
			t.Fatalf("storetest: read %s %d: %v", table, id, err)
		}
		out = append(out, *row)
	}
	return out
}

// SkippedPackages returns every skipped package record, oldest first.
func SkippedPackages(t testing.TB, db *store.DB) []hoard.SkippedPackage {
	t.Helper()
	return each(t, db, "skipped_packages", db.FindSkippedPackage)
}

// Runs returns every ingestion run, oldest first.
func Runs(t testing.TB, db *store.DB) []hoard.IngestionRun {
	t.Helper()
	return each(t, db, "ingestion_runs", db.FindRun)
}

// SendRequests returns every bot delivery request, oldest first
// (store.ListBotSendRequests lists a user's newest 500).
func SendRequests(t testing.TB, db *store.DB) []hoard.BotSendRequest {
	t.Helper()
	return each(t, db, "bot_send_requests", db.FindBotSendRequest)
}

// Groups returns every package group with its member count, oldest
// first; empty groups too. A group's members are the packages (Packages)
// whose PackageGroupID is its ID.
func Groups(t testing.TB, db *store.DB) []hoard.PackageGroup {
	t.Helper()
	return each(t, db, "package_groups", db.FindGroupByID)
}

// PackageFiles returns every file-listing entry of a package, in listing
// order (by ordinal).
func PackageFiles(t testing.TB, db *store.DB, packageID int64) []hoard.PackageFile {
	t.Helper()
	const page = 1000 // store.ListPackageFiles's largest page
	var out []hoard.PackageFile
	for after := -1; ; {
		files, err := db.ListPackageFiles(context.Background(), packageID, after, page, "")
		if err != nil {
			t.Fatalf("storetest.PackageFiles: %v", err)
		}
		out = append(out, files...)
		if len(files) < page {
			return out
		}
		after = files[len(files)-1].Ordinal
	}
}

// Topics returns the progress row of every forum topic under every
// channel map (one per map that reads the topic), by channel, then map.
func Topics(t testing.TB, db *store.DB) []hoard.TopicProgress {
	t.Helper()
	ctx := context.Background()
	channels, err := db.ListChannels(ctx, "")
	if err != nil {
		t.Fatalf("storetest.Topics: %v", err)
	}
	var out []hoard.TopicProgress
	for _, c := range channels {
		maps, err := db.ListChannelMaps(ctx, c.ID)
		if err != nil {
			t.Fatalf("storetest.Topics: %v", err)
		}
		for _, m := range maps {
			topics, err := db.ListTopics(ctx, m.ID)
			if err != nil {
				t.Fatalf("storetest.Topics: %v", err)
			}
			out = append(out, topics...)
		}
	}
	return out
}

// tableList quotes table names for a statement that takes several.
func tableList(tables []string) string {
	quoted := make([]string, len(tables))
	for i, table := range tables {
		quoted[i] = pgx.Identifier{table}.Sanitize()
	}
	return strings.Join(quoted, ", ")
}

// Analyze refreshes the planner's statistics of tables (ANALYZE), as
// autovacuum would have by the time a query runs against rows a test or
// benchmark just loaded.
func Analyze(t testing.TB, db *store.DB, tables ...string) {
	t.Helper()
	if _, err := q(db).Exec(context.Background(), `ANALYZE `+tableList(tables)); err != nil {
		t.Fatalf("storetest.Analyze: %v", err)
	}
}

// Vacuum vacuums and analyses tables (VACUUM ANALYZE), as autovacuum does
// with a table that has been written to for a while. VACUUM cannot run in
// a transaction: use it on a NewDB database.
func Vacuum(t testing.TB, db *store.DB, tables ...string) {
	t.Helper()
	if _, err := q(db).Exec(context.Background(), `VACUUM ANALYZE `+tableList(tables)); err != nil {
		t.Fatalf("storetest.Vacuum: %v", err)
	}
}

// Clear deletes every row of tables: what a process left behind that the
// next one must not find (handled updates, leases, rate limits…).
func Clear(t testing.TB, db *store.DB, tables ...string) {
	t.Helper()
	for _, table := range tables {
		if _, err := q(db).Exec(context.Background(), `DELETE FROM `+pgx.Identifier{table}.Sanitize()); err != nil {
			t.Fatalf("storetest.Clear(%s): %v", table, err)
		}
	}
}

// QueueNotice puts a package in the subscription notifier's inbox (or
// moves it there again) as if it had arrived age ago: a package indexed
// again, or one whose burst has settled.
func QueueNotice(t testing.TB, db *store.DB, packageID int64, age time.Duration) {
	t.Helper()
	if _, err := q(db).Exec(context.Background(), `INSERT INTO bot_notify_inbox (package_id, queued_at)
		VALUES ($1, now() - make_interval(secs => $2)) ON CONFLICT (package_id) DO UPDATE SET queued_at = excluded.queued_at`,
		packageID, age.Seconds()); err != nil {
		t.Fatalf("storetest.QueueNotice: %v", err)
	}
}

// AgeNotifyInbox makes every package in the subscription notifier's inbox
// look as if it had arrived age ago (by the database's clock), so that the
// inbox looks quiet without waiting.
func AgeNotifyInbox(t testing.TB, db *store.DB, age time.Duration) {
	t.Helper()
	if _, err := q(db).Exec(context.Background(), `UPDATE bot_notify_inbox SET queued_at = now() - make_interval(secs => $1)`,
		age.Seconds()); err != nil {
		t.Fatalf("storetest.AgeNotifyInbox: %v", err)
	}
}

// ExpireBotSearchPages makes every saved page of the bot's search results
// expired, as it will be once its time to live has passed.
func ExpireBotSearchPages(t testing.TB, db *store.DB) {
	t.Helper()
	if _, err := q(db).Exec(context.Background(), `UPDATE bot_search_pages SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatalf("storetest.ExpireBotSearchPages: %v", err)
	}
}
