package migrations_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/hoard/hoard/migrations"
	"github.com/hoard/hoard/store/storetest"
	"github.com/jackc/pgx/v5"
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

	type record struct {
		Name, Owner, Host, HostURL string
		HostOwner                  string
	}
	rows, _ := pool.Query(ctx, `
		SELECT c.name, u.email, coalesce(h.name, ''), coalesce(h.url, ''), coalesce(hu.email, '')
		FROM crowdfunds c JOIN users u ON u.id = c.user_id
		LEFT JOIN crowdfund_hosts h ON h.id = c.host_id LEFT JOIN users hu ON hu.id = h.user_id
		ORDER BY c.name`)
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[record])
	if err != nil {
		t.Fatal(err)
	}
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

	type host struct{ Owner, Name string }
	rows, _ = pool.Query(ctx, `SELECT u.email, h.name FROM crowdfund_hosts h JOIN users u ON u.id = h.user_id ORDER BY 1, 2`)
	hosts, err := pgx.CollectRows(rows, pgx.RowToStructByPos[host])
	if err != nil {
		t.Fatal(err)
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
