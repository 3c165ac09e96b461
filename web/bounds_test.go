package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/paramtest"
	"github.com/hoard/hoard/store"
)

// TestHostileInputIsRefusedByName: the inputs of issue #13 that answered 500
// (or held the database for seconds) answer 422 at once, with a message
// naming the parameter; legal values next to them still work.
func TestHostileInputIsRefusedByName(t *testing.T) {
	e := newEnv(t)
	w := e.seedFuzzWorld()
	ids := func(key string) string { return strconv.FormatInt(w.ids[key], 10) }
	tags := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "t%d,", i)
		}
		return b.String()
	}
	values := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return v
	}
	for _, c := range []struct {
		name, method, path string
		form               url.Values
		who                int // index into w.users
		status             int
		want               string
	}{
		{"file search of 50,000 characters", "GET", "/api/packages/" + ids("/packages/") + "/files?q=" + strings.Repeat("a", 50_000), nil, 1,
			422, "q is too long (200 characters at most)"},
		{"file search of 200 characters", "GET", "/api/packages/" + ids("/packages/") + "/files?q=" + strings.Repeat("a", 200), nil, 1, 200, `"items":[]`},
		{"file search after past INTEGER", "GET", "/api/packages/" + ids("/packages/") + "/files?after=2147483648", nil, 1, 422, "after is out of range"},
		{"catalog creator NUL", "GET", "/?creator=%00", nil, 1, 422, "creator contains a NUL"},
		{"catalog tag NUL", "GET", "/?tag=%00", nil, 1, 422, "tag contains a NUL"},
		{"catalog q invalid UTF-8", "GET", "/api/packages?q=%ff", nil, 1, 422, "q is not valid UTF-8"},
		{"catalog channel out of range", "GET", "/api/packages?channel=99999999999999999999999", nil, 1, 422, "channel is out of range"},
		{"catalog channel negative", "GET", "/api/packages?channel=-1", nil, 1, 422, "channel must be at least 0"},
		{"catalog of 65 tags", "GET", "/api/packages?tag=" + url.QueryEscape(tags(65)), nil, 1, 422, "at most 64 tags"},
		{"crowdfunds delivery NUL", "GET", "/crowdfunds?delivery=%00", nil, 1, 422, "delivery contains a NUL"},
		{"crowdfunds delivery unknown", "GET", "/crowdfunds?delivery=LOST", nil, 1, 422, "delivery must be one of NOT_DELIVERED, PARTIAL, DELIVERED"},
		{"crowdfunds host out of range", "GET", "/crowdfunds?host=99999999999999999999999", nil, 1, 422, "host is out of range"},
		{"crowdfunds host past INTEGER", "GET", "/crowdfunds?host=99999999999", nil, 1, 200, "Crowdfunds"},
		{"notifications before out of range", "GET", "/api/notifications?before=99999999999999999999999", nil, 2, 422, "before is out of range"},
		{"notifications before past INTEGER", "GET", "/api/notifications?before=99999999999", nil, 2, 200, `"items"`},
		{"login email NUL", "POST", "/login", values("email", "a\x00@example.com", "password", "x"), 0, 422, "email contains a NUL"},
		{"login email of 50,000 characters", "POST", "/login", values("email", strings.Repeat("a", 50_000), "password", "x"), 0, 422, "email is too long"},
		{"registration code NUL", "POST", "/register", values("code", "\x00", "email", "a@example.com", "password", "long enough pw"), 0, 422, "code contains a NUL"},
		{"tags NUL", "POST", "/packages/tags", values("id", ids("/packages/"), "tags", "a\x00b"), 2, 422, "tags contains a NUL"},
		{"65 tags at once", "POST", "/packages/tags", values("id", ids("/packages/"), "tags", tags(65)), 2, 422, "at most 64 tags at a time"},
		{"a tag of 65 characters", "POST", "/packages/tags", values("id", ids("/packages/"), "tags", strings.Repeat("x", 65)), 2, 422, "at most 64 characters"},
		{"501 packages at once", "POST", "/packages/tags", values(slices.Repeat([]string{"id", "1"}, 501)...), 2, 422, "id has too many values (500 at most)"},
		{"group rename NUL", "POST", "/groups/" + ids("/groups/") + "/rename", values("name", "x\x00"), 2, 422, "name contains a NUL"},
		{"channel category NUL", "POST", "/admin/messenger/channels/" + ids("{channelId}"), values("category", "\x00"), 2, 422, "category contains a NUL"},
		{"entry past 4,096 characters", "POST", "/packages/" + ids("/packages/") + "/preview/extract", values("entry", strings.Repeat("a", 4097)), 2, 422,
			"entry is too long (4096 characters at most)"},
		{"invites count out of range", "POST", "/admin/invites", values("count", "99999999999999999999"), 2, 422, "count is out of range"},
		{"topic flag not a boolean", "POST", "/api/messenger/channels/" + ids("{channelId}") + "/topics/5", values("fetch_enabled", "maybe"), 2, 422,
			"fetch_enabled must be true or false"},
		{"a path with a NUL", "GET", "/packages/%00", nil, 1, 422, "The path contains a NUL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var cookie *http.Cookie
			if u := w.users[c.who]; u != nil {
				cookie = e.session(u)
			}
			resp, body := e.do(nil, c.method, c.path, c.form, cookie)
			if resp.StatusCode != c.status || !strings.Contains(body, c.want) {
				t.Fatalf("= %d %.400s, want %d with %q", resp.StatusCode, body, c.status, c.want)
			}
		})
	}

	// A package may carry 64 tags; a 65th is refused, and nothing of the
	// bulk edit is saved.
	ctx := context.Background()
	full, other := w.ids["/packages/"], w.ids["another package"]
	if _, err := e.db.EditPackageTags(ctx, []int64{full}, store.TagEdit{Set: strings.Split(strings.TrimSuffix(tags(64), ","), ",")}); err != nil {
		t.Fatal(err)
	}
	admin := e.session(w.users[2])
	resp, body := e.do(nil, "POST", "/packages/tags", values("id", strconv.FormatInt(full, 10), "id", strconv.FormatInt(other, 10),
		"mode", "add", "tags", "one more"), admin)
	if resp.StatusCode != 422 || !strings.Contains(body, "at most 64 tags") {
		t.Fatalf("a 65th tag = %d %.300s", resp.StatusCode, body)
	}
	if p, _ := e.db.FindPackageByID(ctx, other); slices.Contains(p.Tags, "one more") {
		t.Fatal("a refused bulk edit changed another package")
	}

	// The upload's group name is a multipart field: the same rules.
	e.publishTarget(true) // else the upload is refused before its fields are read
	resp, body = e.upload(e.session(w.users[1]), uploadPart{field: "group_name", body: strings.NewReader("a\x00b")},
		uploadPart{field: "files", name: "a.zip", body: strings.NewReader("PK")})
	if resp.StatusCode != 422 || !strings.Contains(body, "group_name contains a NUL") {
		t.Fatalf("upload group name NUL = %d %s", resp.StatusCode, body)
	}
}

// TestHostileParamsAsTheBotSeesThem: the arguments bot's
// TestHostileArgumentsGetTheWebsRefusal sends to every command are 422
// here, with the same words after the parameter's name (one validator,
// hoard.CheckParam, serves both).
func TestHostileParamsAsTheBotSeesThem(t *testing.T) {
	e := newEnv(t)
	u, _ := e.user(hoard.RoleUser)
	cookie := e.session(u)
	p := &hoard.Package{FileName: "Red Dragon.zip", FileSize: 1, ArchiveType: hoard.ArchiveZIP}
	if err := e.db.CreatePackage(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	for _, h := range paramtest.HostileValues {
		for _, path := range []string{"/api/packages?q=", fmt.Sprintf("/api/packages/%d/files?q=", p.ID)} {
			t.Run(h.Name+path, func(t *testing.T) {
				resp, body := e.do(nil, "GET", path+url.QueryEscape(h.Value), nil, cookie)
				if want := "q " + h.Says; resp.StatusCode != 422 || !strings.Contains(body, want) {
					t.Errorf("= %d %.300s, want 422 with %q", resp.StatusCode, body, want)
				}
			})
		}
	}
}
