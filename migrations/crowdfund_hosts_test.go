package migrations_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/migrations"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// TestCrowdfundHostsGoToTheirUsers: migration 029 gives each host row to the
// users whose records use it — one row each, so a host two users share
// becomes two — and every record keeps its host's name; a host nobody
// uses goes.
func TestCrowdfundHostsGoToTheirUsers(t *testing.T) {
	ctx := context.Background()
	pool := connect(t, storetest.EmptyURL(t))
	if err := migrations.MigrateTo(ctx, pool, 28); err != nil {
		t.Fatal(err)
	}
	_, err := pool.Exec(ctx, `
		INSERT INTO users (id, email, password_hash, role) OVERRIDING SYSTEM VALUE VALUES
			(1, 'alice@example.com', 'x', 'USER'), (2, 'bob@example.com', 'x', 'USER'),
			(3, 'carol@example.com', 'x', 'USER'), (4, 'dave@example.com', 'x', 'USER');
		INSERT INTO crowdfund_hosts (id, name, url) OVERRIDING SYSTEM VALUE VALUES
			(10, 'Kickstarter', 'https://kickstarter.example'), (11, 'Patreon', ''), (12, 'Unused Shop', ''), (13, 'Gumroad', '');
		INSERT INTO crowdfunds (user_id, host_id, name) VALUES
			(2, 10, 'Bob on Kickstarter'), (1, 10, 'Alice on Kickstarter'), (2, 11, 'Bob on Patreon'),
			(3, 13, 'Carol one'), (3, 13, 'Carol two'), (4, NULL, 'Dave without a host');`)
	if err != nil {
		t.Fatal(err)
	}
	if err := migrations.Migrate(ctx, pool, quiet); err != nil {
		t.Fatal(err)
	}

	// Read back through the store, as the application reads them.
	db := store.New(pool)
	emails := map[int64]string{1: "alice@example.com", 2: "bob@example.com", 3: "carol@example.com", 4: "dave@example.com"}
	type host struct{ Owner, Name string }
	type record struct {
		Name, Owner, Host, HostURL string
		HostOwner                  string
	}
	var got []record
	var hosts []host
	hostByID := map[int64]hoard.CrowdfundHost{}
	for id := int64(1); id <= 4; id++ {
		hs, err := db.ListHosts(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			hostByID[h.ID] = h
			hosts = append(hosts, host{emails[h.UserID], h.Name})
		}
	}
	for id := int64(1); id <= 4; id++ {
		cs, err := db.ListCrowdfunds(ctx, id, store.CrowdfundFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			h := hostByID[c.HostID]
			got = append(got, record{c.Name, emails[c.UserID], c.HostName, h.URL, emails[h.UserID]})
		}
	}
	slices.SortFunc(got, func(a, b record) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(hosts, func(a, b host) int { return strings.Compare(a.Owner+"|"+a.Name, b.Owner+"|"+b.Name) })
	want := []record{
		{"Alice on Kickstarter", "alice@example.com", "Kickstarter", "https://kickstarter.example", "alice@example.com"},
		{"Bob on Kickstarter", "bob@example.com", "Kickstarter", "https://kickstarter.example", "bob@example.com"},
		{"Bob on Patreon", "bob@example.com", "Patreon", "", "bob@example.com"},
		{"Carol one", "carol@example.com", "Gumroad", "", "carol@example.com"},
		{"Carol two", "carol@example.com", "Gumroad", "", "carol@example.com"},
		{"Dave without a host", "dave@example.com", "", "", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("records after the migration:\n got %+v\nwant %+v", got, want)
	}

	wantHosts := []host{{"alice@example.com", "Kickstarter"}, {"bob@example.com", "Kickstarter"}, {"bob@example.com", "Patreon"},
		{"carol@example.com", "Gumroad"}}
	if !reflect.DeepEqual(hosts, wantHosts) {
		t.Errorf("hosts after the migration:\n got %+v\nwant %+v", hosts, wantHosts)
	}

	// A record can no longer point at another user's host.
	if _, err := pool.Exec(ctx, `UPDATE crowdfunds SET host_id = (SELECT id FROM crowdfund_hosts WHERE user_id = 1) WHERE user_id = 3`); err == nil {
		t.Error("carol's record took alice's host")
	}
}
