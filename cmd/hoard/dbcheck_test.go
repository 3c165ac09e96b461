package main

import (
	"context"
	"testing"
	"time"

	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/store"
)

// openStore opens a store on url (two connections) for a test's checks
// of the database, which read through store's methods and storetest's
// readers; done closes it.
func openStore(t testing.TB, url string) (db *store.DB, done func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := store.Open(ctx, url, store.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	return db, db.Close
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
