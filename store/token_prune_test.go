package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// listedAndHeld is what path_tokens and name_tokens list, and the tokens
// the chunks and the names hold, each distinct and sorted.
type listedAndHeld struct {
	Paths, Names, HeldByChunks, HeldByNames []string
}

// readTokenLists reads db's listedAndHeld.
func readTokenLists(t *testing.T, db *store.DB) listedAndHeld {
	t.Helper()
	var l listedAndHeld
	for _, q := range []struct {
		dst *[]string
		sql string
	}{
		{&l.Paths, `SELECT DISTINCT token FROM path_tokens`},
		{&l.Names, `SELECT DISTINCT token FROM name_tokens`},
		{&l.HeldByChunks, `SELECT DISTINCT t FROM package_paths, unnest(tokens) AS t`},
		{&l.HeldByNames, `SELECT DISTINCT t FROM packages, unnest(hoard_tokens(lower(file_name))) AS t`},
	} {
		must(t, db.Pool().QueryRow(context.Background(), `SELECT coalesce(array_agg(x ORDER BY x), '{}') FROM (`+q.sql+`) AS s(x)`).Scan(q.dst))
	}
	return l
}

// TestPruneTokensTakesBackWhatNothingHolds: the tokens of a deleted
// package's paths and name, and of a name changed, leave their lists when
// every slice has been pruned, and only those: the lists are then the
// tokens the chunks and the names hold.
func TestPruneTokensTakesBackWhatNothingHolds(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	roost := mustPackage(t, db, func(p *hoard.Package) { p.FileName = "Wyvern Roost.zip" })
	must(t, db.ReplacePackageFiles(ctx, roost.ID, []hoard.PackageFile{{Path: "wyvern/tail_left.stl"}}))
	camp := mustPackage(t, db, func(p *hoard.Package) { p.FileName = "Goblin Camp.zip" })
	must(t, db.ReplacePackageFiles(ctx, camp.ID, []hoard.PackageFile{{Path: "camp/goblin_tent.stl"}}))
	must(t, db.DeletePackage(ctx, camp.ID))
	_, err := db.Pool().Exec(ctx, `UPDATE packages SET file_name = 'Dragon Roost.zip' WHERE id = $1`, roost.ID)
	must(t, err)
	before := readTokenLists(t, db)
	for _, gone := range []string{"camp", "goblin", "tent"} {
		if !slices.Contains(before.Paths, gone) || slices.Contains(before.HeldByChunks, gone) {
			t.Fatalf("%q: listed %v, held %v before the prune: want listed, not held", gone, before.Paths, before.HeldByChunks)
		}
	}
	var removed int64
	for slice := range 3 {
		st, err := db.PruneTokens(ctx, slice, 3)
		must(t, err)
		if st.Skipped != 0 {
			t.Errorf("slice %d: %d batches skipped, want none", slice, st.Skipped)
		}
		removed += st.Removed
	}
	after := readTokenLists(t, db)
	want := listedAndHeld{Paths: after.HeldByChunks, Names: after.HeldByNames, HeldByChunks: before.HeldByChunks, HeldByNames: before.HeldByNames}
	if diff := cmp.Diff(want, after); diff != "" {
		t.Errorf("lists after the prune (-want +got):\n%s", diff)
	}
	if n := int64(len(before.Paths) + len(before.Names) - len(after.Paths) - len(after.Names)); removed != n {
		t.Errorf("removed %d, want %d", removed, n)
	}
	if _, err := db.PruneTokens(ctx, 3, 3); err == nil {
		t.Error("slice 3 of 3 pruned, want an error")
	}
}

// TestPruneTokensWaitsForTheWritersOfItsList: a writer that finds a token
// listed (and so does not list it) and has not committed its chunk yet
// keeps the token: the prune waits for the writer's commit, then sees the
// chunk. Without the lock it removed the token, and the search by tokens
// no longer found the chunk.
func TestPruneTokensWaitsForTheWritersOfItsList(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	old := mustPackage(t, db, func(p *hoard.Package) { p.FileName = "Old Crown.zip" })
	must(t, db.ReplacePackageFiles(ctx, old.ID, []hoard.PackageFile{{Path: "relic/crown.stl"}}))
	must(t, db.DeletePackage(ctx, old.ID)) // "relic" stays listed, held by nothing

	tx, err := db.Pool().Begin(ctx)
	must(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	writer := store.WithTx(tx)
	p := &hoard.Package{FileName: "New Crown.zip", FileSize: 1, ArchiveType: hoard.ArchiveZIP, ContentHash: strings.Repeat("c0", 32)}
	must(t, writer.CreatePackage(ctx, p))
	must(t, writer.ReplacePackageFiles(ctx, p.ID, []hoard.PackageFile{{Path: "relic/crown.stl"}}))

	done := make(chan error, 1)
	go func() {
		_, err := db.PruneTokens(ctx, 0, 1)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the prune ended (%v) while a writer of its list had not committed; want it to wait", err)
	case <-time.After(300 * time.Millisecond):
	}
	must(t, tx.Commit(ctx))
	must(t, <-done)
	if l := readTokenLists(t, db); !slices.Contains(l.Paths, "relic") {
		t.Errorf("path_tokens %v: lost %q, which the committed chunk holds", l.Paths, "relic")
	}
	res, err := db.SearchPackages(ctx, store.SearchQuery{Text: "relic"})
	must(t, err)
	if len(res.Hits) != 1 || res.Hits[0].Package.ID != p.ID {
		t.Errorf("search for relic: %d hits, want the new crown", len(res.Hits))
	}
}
