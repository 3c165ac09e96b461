package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// tokenLists are the vocabularies of tokens the search looks texts up in
// (migrations 035 and 036), each with the test that a token is still held:
// by a chunk of package_paths, by a package's name. Both only grow as
// writers list new tokens; PruneTokens takes back those nothing holds.
var tokenLists = []struct {
	table, held string
}{
	{"path_tokens", `EXISTS (SELECT FROM package_paths c WHERE c.tokens @> ARRAY[l.token])`},
	{"name_tokens", `EXISTS (SELECT FROM packages p WHERE hoard_tokens(lower(p.file_name)) @> ARRAY[l.token])`},
}

// pruneBatch is how many tokens PruneTokens tests at a time (a lookup in a
// GIN index each).
const pruneBatch = 500

// pruneLockWait bounds how long PruneTokens waits for the writers of a
// list: a batch it cannot lock by then is left to the next clean-up.
const pruneLockWait = "2s"

// pgLockNotAvailable is PostgreSQL's error when lock_timeout ran out.
const pgLockNotAvailable = "55P03"

// PruneStats reports what PruneTokens did.
type PruneStats struct {
	Removed int64 // tokens no chunk or name held any more
	Skipped int   // batches left for later: writers held their list
}

// PruneTokens removes from path_tokens and name_tokens the tokens of one
// slice of them (slice of slices, by the token's hash) that no chunk of
// package_paths and no package's name holds: left behind by packages
// deleted, files replaced and names changed. A clean-up that prunes the
// slice of its hour of the week visits every token once a week.
//
// A writer lists a new token only when it does not see it listed, and
// does not commit its chunk until later: a prune that tested the token in
// between would not see the chunk and would take the token away from it.
// So each batch locks its list against writers (SHARE ROW EXCLUSIVE, which
// waits for those that have written to it, their INSERT holding ROW
// EXCLUSIVE to their commit even when it inserted nothing) and tests its
// tokens after; writers that come later wait for the batch and then see
// what it removed.
func (db *DB) PruneTokens(ctx context.Context, slice, slices int) (PruneStats, error) {
	var st PruneStats
	if slices <= 0 || slice < 0 || slice >= slices {
		return st, fmt.Errorf("prune tokens: slice %d of %d", slice, slices)
	}
	for _, list := range tokenLists {
		rows, err := db.q.Query(ctx, `SELECT DISTINCT token FROM `+list.table+`
			WHERE abs(hashtext(token)::bigint) % $2::int = $1::int ORDER BY token`, slice, slices)
		if err != nil {
			return st, wrap("prune tokens: "+list.table, err)
		}
		tokens, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return st, wrap("prune tokens: "+list.table, err)
		}
		for len(tokens) > 0 {
			batch := tokens[:min(pruneBatch, len(tokens))]
			tokens = tokens[len(batch):]
			n, err := db.pruneBatch(ctx, list.table, list.held, batch)
			var pgErr *pgconn.PgError
			switch {
			case errors.As(err, &pgErr) && pgErr.Code == pgLockNotAvailable:
				st.Skipped++
			case err != nil:
				return st, err
			}
			st.Removed += n
		}
	}
	return st, nil
}

// pruneBatch removes the tokens of table that held does not find held:
// it finds them without a lock (a common token's test reads a long list of
// the index, which writers need not wait for), then tests those again in a
// transaction that locks the list against its writers first, and removes
// them.
func (db *DB) pruneBatch(ctx context.Context, table, held string, tokens []string) (int64, error) {
	rows, err := db.q.Query(ctx, `SELECT l.token FROM unnest($1::text[]) AS l(token) WHERE NOT `+held, tokens)
	if err != nil {
		return 0, wrap("prune tokens: "+table, err)
	}
	unheld, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(unheld) == 0 {
		return 0, wrap("prune tokens: "+table, err)
	}
	var removed int64
	err = db.InTx(ctx, func(tx *DB) error {
		for _, stmt := range []string{`SET LOCAL lock_timeout = '` + pruneLockWait + `'`,
			`LOCK TABLE ` + table + ` IN SHARE ROW EXCLUSIVE MODE`} {
			if _, err := tx.q.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("prune tokens: lock %s: %w", table, err)
			}
		}
		tag, err := tx.q.Exec(ctx, `DELETE FROM `+table+` l WHERE l.token = ANY($1::text[]) AND NOT `+held, unheld)
		if err != nil {
			return wrap("prune tokens: "+table, err)
		}
		removed = tag.RowsAffected()
		return nil
	})
	return removed, err
}
