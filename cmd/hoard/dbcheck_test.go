package main

import (
	"context"
	"testing"
	"time"

	"github.com/hoard/hoard/messenger/emulator"

	"github.com/jackc/pgx/v5"
)

// dbConn connects to url for a test's checks of the database: everything
// done through the connection shares one deadline of limit; done closes it.
func dbConn(t testing.TB, url string, limit time.Duration) (ctx context.Context, conn *pgx.Conn, done func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return ctx, conn, func() {
		_ = conn.Close(ctx)
		cancel()
	}
}

// queryStrings returns the one text column of every row sql selects.
func queryStrings(t testing.TB, url, sql string, args ...any) []string {
	t.Helper()
	ctx, conn, done := dbConn(t, url, 30*time.Second)
	defer done()
	return connStrings(ctx, t, conn, sql, args...)
}

// connStrings is queryStrings on an open connection.
func connStrings(ctx context.Context, t testing.TB, conn *pgx.Conn, sql string, args ...any) []string {
	t.Helper()
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// postsIn counts the posts an emulator's saved world holds in stateDir
// (the emulator must have stopped), in every channel together.
func postsIn(t testing.TB, stateDir string) int {
	t.Helper()
	n, err := emulator.SavedPosts(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
