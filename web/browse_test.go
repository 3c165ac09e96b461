package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// TestBrowsePages: a creator's and a tag's page list exactly their
// packages; packages show the kind people think in, link their creator,
// tags and posts; the channel filter offers source channels only.
func TestBrowsePages(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pk := e.seedCatalog(func(p *hoard.Package) {
		if p.FileName == "Dragon_Bust_v2.stl" {
			p.ArchiveType, p.Tags = hoard.ArchiveDocument, []string{"STL", "big/heavy"}
		}
	})
	dest := &hoard.Channel{PlatformID: 9001, Title: "Hoard Archive Destination", Username: "hoardarchive", Kind: hoard.ChannelDestination}
	if err := e.db.UpsertChannel(ctx, dest); err != nil {
		t.Fatal(err)
	}
	bust := pk["Dragon_Bust_v2.stl"]
	if err := e.db.SetPackageDestination(ctx, bust.ID, dest.ID, []int64{77}); err != nil {
		t.Fatal(err)
	}
	user, _ := e.user(hoard.RoleUser)
	c := e.session(user)

	tests := []struct {
		name       string
		path       string
		status     int
		want, nope []string
	}{
		{"a creator's page", "/creators/" + url.PathEscape("Mammoth Factory"), 200,
			[]string{"By Mammoth Factory", "Dragon_Bust_v2.stl", "Knight Helmet.rar"}, []string{"Red Dragon Pack.zip"}},
		{"a creator nobody is", "/creators/Nobody", 200, []string{"By Nobody", "Nothing found"}, []string{"Knight Helmet.rar"}},
		{"a tag's page, a slash in the tag", "/tags/" + url.PathEscape("big/heavy"), 200,
			[]string{"Tagged big/heavy", "Dragon_Bust_v2.stl"}, []string{"Knight Helmet.rar"}},
		{"a tag's page in list view", "/tags/STL?view=list", 200,
			[]string{"Tagged STL", `<table class="list">`, "Knight Helmet.rar", "Red Dragon Pack.zip"}, nil},
		{"kinds in the grid, tags and creators linked", "/", 200,
			[]string{`<span class="kind">STL</span>`, `<span class="kind">RAR</span>`, `href="/tags/big%2Fheavy"`, `href="/creators/Mammoth%20Factory"`},
			[]string{`>DOCUMENT<`}},
		{"the type filter offers kinds", "/?type=stl", 200,
			[]string{"Dragon_Bust_v2.stl", `<option selected>STL</option>`}, []string{"Knight Helmet.rar"}},
		{"the channel filter leaves the destination out", "/", 200,
			[]string{">Mammoth Channel</option>"}, []string{">Hoard Archive Destination</option>"}},
		{"a package links its creator, tags and published post", fmt.Sprintf("/packages/%d", bust.ID), 200,
			[]string{"<td>STL</td>", `href="/creators/Mammoth%20Factory"`, `href="/tags/STL"`, `href="https://t.me/hoardarchive/77"`}, nil},
		{"a bad kind", "/?type=tar", 422, []string{"type must be one of ZIP, RAR, 7Z, STL"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.checkPage(t, c, tt.path, tt.status, tt.want, tt.nope)
		})
	}
}

// TestGroupPageShowsAMembersPreviewAndWords: a group without a picture of
// its own shows a member's on its card and its page; the page says how it
// was formed in words, shows a learned rule with a button to remove it, and
// a declined rule with a button to learn it anyway (which queues grouping).
func TestGroupPageShowsAMembersPreviewAndWords(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pk := e.seedCatalog()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	withPreview, other := pk["Dragon_Bust_v2.stl"], pk["Knight Helmet.rar"]
	auto := &hoard.PackageGroup{Name: "Time pair", GroupingSource: hoard.GroupAutoTime, SourceChannelID: withPreview.SourceChannelID}
	if err := e.db.CreateGroup(ctx, auto); err != nil {
		t.Fatal(err)
	}
	if err := e.db.SetPackageGroup(ctx, []int64{other.ID, withPreview.ID}, auto.ID); err != nil {
		t.Fatal(err)
	}
	resp, body := e.do(nil, "GET", fmt.Sprintf("/groups/%d", auto.ID), nil, c)
	if resp.StatusCode != 200 || !strings.Contains(body, fmt.Sprintf(`<img src="/groups/%d/preview"`, auto.ID)) ||
		!strings.Contains(body, "grouped by time") || strings.Contains(body, "AUTO_TIME<") {
		t.Fatalf("group page: %d\n%s", resp.StatusCode, excerpt(body))
	}
	if resp, _ := e.do(nil, "GET", fmt.Sprintf("/groups/%d/preview", auto.ID), nil, c); resp.StatusCode != 200 {
		t.Fatalf("group preview: %d", resp.StatusCode)
	}
	if _, body := e.do(nil, "GET", "/?tab=groups", nil, c); !strings.Contains(body, fmt.Sprintf(`<img src="/groups/%d/preview"`, auto.ID)) {
		t.Errorf("the group's card shows no preview:\n%s", excerpt(body))
	}

	manual, err := e.db.CreateManualGroup(ctx, "Picks", []int64{pk["Red Dragon Pack.zip"].ID, other.ID})
	if err != nil {
		t.Fatal(err)
	}
	rule := &hoard.GroupingRule{GroupID: manual.ID, Pattern: "red dragon", SignalType: hoard.RulePrefix, Confidence: 0.8}
	if _, err := e.db.AddGroupingRule(ctx, rule); err != nil {
		t.Fatal(err)
	}
	page := fmt.Sprintf("/groups/%d", manual.ID)
	if _, body := e.do(nil, "GET", page, nil, c); !strings.Contains(body, "Learned rule: <strong>file names starting with “red dragon”</strong>") ||
		!strings.Contains(body, fmt.Sprintf(`action="/groups/%d/rules/%d/delete"`, manual.ID, rule.ID)) {
		t.Fatalf("manual group page:\n%s", excerpt(body))
	}
	if resp, _ := e.do(nil, "POST", fmt.Sprintf("/groups/%d/rules/%d/delete", manual.ID, rule.ID), url.Values{}, c); resp.StatusCode != 303 {
		t.Fatalf("remove rule: %d", resp.StatusCode)
	}
	if rules, _ := e.db.ListGroupRules(ctx, manual.ID); len(rules) != 0 {
		t.Fatalf("rules after removal: %+v", rules)
	}
	if err := e.db.SetDeclinedRule(ctx, manual.ID, &store.DeclinedRule{SignalType: hoard.RuleCreator, Pattern: "Mammoth Factory",
		Note: "No rule learned: it would also match packages of another group."}); err != nil {
		t.Fatal(err)
	}
	if _, body := e.do(nil, "GET", page, nil, c); !strings.Contains(body, "No rule learned: it would also match") ||
		!strings.Contains(body, fmt.Sprintf(`action="/groups/%d/rules"`, manual.ID)) {
		t.Fatalf("declined rule not offered:\n%s", excerpt(body))
	}
	if resp, _ := e.do(nil, "POST", page+"/rules", url.Values{}, c); resp.StatusCode != 303 {
		t.Fatalf("learn anyway: %d", resp.StatusCode)
	}
	rules, _ := e.db.ListGroupRules(ctx, manual.ID)
	declined, _ := e.db.FindDeclinedRule(ctx, manual.ID)
	if len(rules) != 1 || rules[0].Pattern != "Mammoth Factory" || declined != nil || len(e.jobs("group_channel")) != 1 {
		t.Fatalf("after learning anyway: rules %+v, declined %+v, jobs %+v", rules, declined, e.jobs("group_channel"))
	}
	if resp, _ := e.do(nil, "POST", page+"/rules", url.Values{}, c); resp.StatusCode != 409 {
		t.Fatalf("learning again: %d, want 409", resp.StatusCode)
	}
}

// TestConflictNotificationLinksItsGroups: a grouping conflict's
// notification links both groups by name (page and bell), and goes away
// when one of them is merged into the other.
func TestConflictNotificationLinksItsGroups(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pk := e.seedCatalog()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	a, err := e.db.CreateManualGroup(ctx, "Dragons <big>", []int64{pk["Red Dragon Pack.zip"].ID, pk["Dragon_Bust_v2.stl"].ID})
	if err != nil {
		t.Fatal(err)
	}
	b := &hoard.PackageGroup{Name: "Knights", GroupingSource: hoard.GroupAutoTime, SourceChannelID: a.SourceChannelID}
	if err := e.db.CreateGroup(ctx, b); err != nil {
		t.Fatal(err)
	}
	note := &hoard.Notification{Type: hoard.NotifyGroupingConflict, Severity: hoard.SeverityInfo, Title: "Grouping conflict",
		Context: []byte(fmt.Sprintf(`{"group_a":%d,"group_b":%d,"name_a":"Dragons <big>","name_b":"Knights"}`, a.ID, b.ID)), DedupKey: "conflict-test"}
	if _, err := e.db.CreateNotification(ctx, note); err != nil {
		t.Fatal(err)
	}
	_, page := e.do(nil, "GET", "/notifications", nil, c)
	for _, want := range []string{fmt.Sprintf(`<a href="/groups/%d">Open “Dragons &lt;big&gt;”</a>`, a.ID), fmt.Sprintf(`<a href="/groups/%d">Open “Knights”</a>`, b.ID)} {
		if !strings.Contains(page, want) {
			t.Errorf("notifications page lacks %s", want)
		}
	}
	if _, body := e.do(nil, "GET", "/api/notifications", nil, c); !strings.Contains(body, fmt.Sprintf(`"links":[{"href":"/groups/%d","label":"Open “Dragons \u003cbig\u003e”"}`, a.ID)) {
		t.Errorf("the bell's JSON lacks the links: %s", body)
	}
	if _, err := e.db.MergeGroups(ctx, b.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, body := e.do(nil, "GET", "/api/notifications", nil, c); !strings.Contains(body, `"items":[]`) {
		t.Errorf("the conflict outlived the merge: %s", body)
	}
}

// checkPage gets a page as the session's user and fails the test unless it
// answers status and holds every one of want and none of nope.
func (e *testEnv) checkPage(t testing.TB, c *http.Cookie, path string, status int, want, nope []string) {
	t.Helper()
	resp, body := e.do(nil, "GET", path, nil, c)
	if resp.StatusCode != status {
		t.Fatalf("%s: status %d, want %d", path, resp.StatusCode, status)
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", path, w)
		}
	}
	for _, n := range nope {
		if strings.Contains(body, n) {
			t.Errorf("%s shows %q", path, n)
		}
	}
}
