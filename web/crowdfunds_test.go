package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/hoard/hoard"
)

func TestCrowdfundsArePrivateAndLinkPackages(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pk := e.seedCatalog()
	alice, _ := e.user(hoard.RoleUser)
	bob, _ := e.user(hoard.RoleUser)
	ac, bc := e.session(alice), e.session(bob)

	resp, _ := e.do(nil, "POST", "/crowdfunds", url.Values{"name": {"Dragon Kickstarter"}, "host": {"Kickstarter"},
		"link": {"https://example.com/dragons"}, "delivery_status": {"PARTIAL"}, "payment_status": {"PAID"}}, ac)
	if resp.StatusCode != 303 {
		t.Fatalf("create = %d", resp.StatusCode)
	}
	m := regexp.MustCompile(`/crowdfunds/(\d+)`).FindStringSubmatch(resp.Header.Get("Location"))
	if m == nil {
		t.Fatalf("location %q", resp.Header.Get("Location"))
	}
	id := m[1]
	// The same host name in another case is the same host of a user;
	// another user's is their own.
	resp, _ = e.do(nil, "POST", "/crowdfunds", url.Values{"name": {"Other"}, "host": {"kickstarter"}}, ac)
	if hosts, _ := e.db.ListHosts(ctx, alice.ID); resp.StatusCode != 303 || len(hosts) != 1 {
		t.Fatalf("alice's hosts = %d (status %d)", len(hosts), resp.StatusCode)
	}
	resp, _ = e.do(nil, "POST", "/crowdfunds", url.Values{"name": {"Other"}, "host": {"KICKSTARTER"}}, bc)
	if hosts, _ := e.db.ListHosts(ctx, bob.ID); resp.StatusCode != 303 || len(hosts) != 1 || hosts[0].Name != "KICKSTARTER" {
		t.Fatalf("bob's hosts = %+v (status %d)", hosts, resp.StatusCode)
	}
	// Bob cannot see, edit, link or delete Alice's record.
	for _, probe := range []struct{ method, path string }{
		{"GET", "/crowdfunds/" + id}, {"POST", "/crowdfunds/" + id}, {"POST", "/crowdfunds/" + id + "/delete"},
		{"POST", "/crowdfunds/" + id + "/packages"}, {"POST", "/crowdfunds/" + id + "/send-all"},
		{"GET", "/api/crowdfunds/" + id + "/packages/search?q=dragon"},
	} {
		f := url.Values{"name": {"x"}, "id": {"1"}}
		if probe.method == "GET" {
			f = nil
		}
		if resp, _ := e.do(nil, probe.method, probe.path, f, bc); resp.StatusCode != 404 {
			t.Errorf("bob %s %s = %d, want 404", probe.method, probe.path, resp.StatusCode)
		}
	}
	if _, body := e.do(nil, "GET", "/crowdfunds", nil, bc); strings.Contains(body, "Dragon Kickstarter") {
		t.Fatal("bob's table lists alice's record")
	}
	// Linking through the dialog's search and link routes.
	_, body := e.do(nil, "GET", "/api/crowdfunds/"+id+"/packages/search?q=dragon", nil, ac)
	if !strings.Contains(body, `"file_name":"Red Dragon Pack.zip"`) || !strings.Contains(body, `"linked":false`) {
		t.Fatalf("search: %s", body)
	}
	pack := pk["Red Dragon Pack.zip"]
	resp, _ = e.do(nil, "POST", "/crowdfunds/"+id+"/packages", url.Values{"id": {fmt.Sprint(pack.ID)}}, ac)
	if resp.StatusCode != 303 {
		t.Fatalf("link = %d", resp.StatusCode)
	}
	if _, body = e.do(nil, "GET", "/api/crowdfunds/"+id+"/packages/search?q=red", nil, ac); !strings.Contains(body, `"linked":true`) {
		t.Fatalf("search after link: %s", body)
	}
	_, body = e.do(nil, "GET", "/crowdfunds", nil, ac)
	if !regexp.MustCompile(`Dragon Kickstarter</a></td><td data-label="Host">Kickstarter</td><td data-label="Delivery">Partly delivered</td><td data-label="Payment">Paid</td><td data-label="Packages">1</td>`).MatchString(body) {
		t.Fatalf("table row wrong:\n%s", body)
	}
	// Send all needs a link and published packages.
	if resp, _ := e.do(nil, "POST", "/crowdfunds/"+id+"/send-all", url.Values{}, ac); resp.StatusCode != 303 ||
		resp.Header.Get("Location") != "/settings?done=link-first" {
		t.Fatalf("send all unlinked = %d to %q, want 303 to Settings", resp.StatusCode, resp.Header.Get("Location"))
	}
	e.link(alice, 6001)
	dest := &hoard.Channel{PlatformID: 901, Title: "Dest", Kind: hoard.ChannelDestination}
	_ = e.db.UpsertChannel(ctx, dest)
	_ = e.db.SetPackageDestination(ctx, pack.ID, dest.ID, []int64{5})
	resp, _ = e.do(nil, "POST", "/crowdfunds/"+id+"/send-all", url.Values{}, ac)
	if resp.StatusCode != 303 || !strings.Contains(resp.Header.Get("Location"), "sent=1") {
		t.Fatalf("send all = %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Unlink, edit with bad input, delete.
	resp, _ = e.do(nil, "POST", fmt.Sprintf("/crowdfunds/%s/packages/%d/delete", id, pack.ID), url.Values{}, ac)
	if resp.StatusCode != 303 {
		t.Fatalf("unlink = %d", resp.StatusCode)
	}
	for _, bad := range []url.Values{{"name": {""}}, {"name": {"x"}, "link": {"javascript:alert(1)"}}, {"name": {"x"}, "delivery_status": {"LOST"}}} {
		if resp, _ := e.do(nil, "POST", "/crowdfunds/"+id, bad, ac); resp.StatusCode != 422 {
			t.Errorf("%v accepted: %d", bad, resp.StatusCode)
		}
	}
	if resp, _ := e.do(nil, "POST", "/crowdfunds/"+id+"/delete", url.Values{}, ac); resp.StatusCode != 303 {
		t.Fatalf("delete = %d", resp.StatusCode)
	}
	if resp, _ := e.do(nil, "GET", "/crowdfunds/"+id, nil, ac); resp.StatusCode != 404 {
		t.Fatalf("deleted record = %d", resp.StatusCode)
	}
}

// TestCrowdfundHostsStayWithTheirUser: the host filter and the host
// suggestions of one user's crowdfund pages never name another user's
// hosts (issue #26).
func TestCrowdfundHostsStayWithTheirUser(t *testing.T) {
	e := newEnv(t)
	alice, _ := e.user(hoard.RoleUser)
	bob, _ := e.user(hoard.RoleUser)
	ac, bc := e.session(alice), e.session(bob)
	create := func(cookie *http.Cookie, name, host string) string {
		t.Helper()
		resp, body := e.do(nil, "POST", "/crowdfunds", url.Values{"name": {name}, "host": {host}}, cookie)
		m := regexp.MustCompile(`/crowdfunds/(\d+)`).FindStringSubmatch(resp.Header.Get("Location"))
		if resp.StatusCode != 303 || m == nil {
			t.Fatalf("create %q = %d %.300s", name, resp.StatusCode, body)
		}
		return m[1]
	}
	create(ac, "Alice's reward", "Alice Secret Host")
	bobs := create(bc, "Bob's reward", "Bob Own Host")
	aliceHosts, err := e.db.ListHosts(context.Background(), alice.ID)
	if err != nil || len(aliceHosts) != 1 {
		t.Fatalf("alice's hosts = %+v, %v", aliceHosts, err)
	}
	for _, path := range []string{"/crowdfunds", "/crowdfunds/" + bobs, fmt.Sprintf("/crowdfunds?host=%d", aliceHosts[0].ID)} {
		resp, body := e.do(nil, "GET", path, nil, bc)
		if resp.StatusCode != 200 || strings.Contains(body, "Alice Secret Host") || strings.Contains(body, "Alice&#39;s reward") {
			t.Errorf("bob's %s = %d, names alice's host or record", path, resp.StatusCode)
		}
		if path != "/crowdfunds/"+bobs && !strings.Contains(body, "Bob Own Host") {
			t.Errorf("bob's %s does not offer his own host", path)
		}
	}
	if _, body := e.do(nil, "GET", "/crowdfunds", nil, ac); !strings.Contains(body, "Alice Secret Host") || strings.Contains(body, "Bob Own Host") {
		t.Error("alice's page lacks her host or names bob's")
	}
}
