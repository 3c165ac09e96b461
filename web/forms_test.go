package web

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/hoard/hoard"
)

// TestFailedFormShowsItsPageAgain: a form post that fails validation
// answers with the page the form was on — not an error page — under the
// error's status, the message beside its field and what was typed kept;
// the message appears once. A success redirects with a confirmation that
// says what happened.
func TestFailedFormShowsItsPageAgain(t *testing.T) {
	e := newEnv(t)
	pk := e.seedCatalog()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	e.signedInAccount("+15550000001") // the join form shows with a signed-in account
	knight := pk["Knight Helmet.rar"]
	pkgPage := fmt.Sprintf("/packages/%d", knight.ID)
	longTag := strings.Repeat("x", 70)

	type outcome struct {
		Status   int
		Location string   // of a redirect
		Page     bool     // the form's page, not an error page
		Messages int      // times the message appears
		Beside   bool     // the message is inside the field's label or form
		Kept     []string // values shown again
	}
	tests := []struct {
		name    string
		path    string
		form    url.Values
		referer string
		field   string // the field whose label holds the message ("" = the page's top)
		message string
		want    outcome
	}{
		{"bulk Apply with nothing selected", "/packages/tags",
			url.Values{"back": {"/?view=grid"}, "mode": {"add"}, "tags": {"keep me"}}, "", "id",
			"Select at least one package.",
			outcome{Status: 422, Page: true, Messages: 1, Beside: true, Kept: []string{`value="keep me"`}}},
		{"bulk Apply with a tag too long", "/packages/tags",
			url.Values{"back": {"/"}, "id": {fmt.Sprint(knight.ID)}, "mode": {"add"}, "tags": {"ok, " + longTag}}, "", "tags",
			"A tag is at most 64 characters long",
			outcome{Status: 422, Page: true, Messages: 1, Beside: true, Kept: []string{`value="ok, ` + longTag + `"`}}},
		{"bulk Apply with no tags named", "/packages/tags",
			url.Values{"back": {"/"}, "id": {fmt.Sprint(knight.ID)}, "mode": {"add"}, "tags": {" , "}}, "", "tags",
			"Name the tags to add",
			outcome{Status: 422, Page: true, Messages: 1, Beside: true}},
		{"create a group from one package", "/groups",
			url.Values{"back": {"/"}, "id": {fmt.Sprint(knight.ID)}, "name": {"Lonely"}}, "", "name",
			"select at least 2 packages",
			outcome{Status: 422, Page: true, Messages: 1, Beside: true, Kept: []string{`value="Lonely"`}}},
		{"a package's tags, by Referer", "/packages/tags",
			url.Values{"id": {fmt.Sprint(knight.ID)}, "mode": {"set"}, "tags": {longTag}}, pkgPage, "tags",
			"A tag is at most 64 characters long",
			outcome{Status: 422, Page: true, Messages: 1, Beside: true, Kept: []string{longTag}}},
		{"invites: a count out of range", "/admin/invites",
			url.Values{"count": {"500"}, "max_uses": {"3"}, "expires_days": {"7"}}, "", "count",
			"count must be 1–50",
			outcome{Status: 422, Page: true, Messages: 1, Beside: true, Kept: []string{`value="500"`, `value="3"`}}},
		{"an invalid channel link", "/admin/messenger/joins",
			url.Values{"ref": {"https://example.com/not-a-channel"}, "category": {"Prints"}}, "/admin/messenger", "ref",
			"",
			outcome{Status: 422, Page: true, Messages: 1, Beside: true, Kept: []string{`value="https://example.com/not-a-channel"`, `value="Prints"`}}},
		{"a phone number that is none", "/admin/messenger/accounts",
			url.Values{"phone": {"12345"}}, "/admin/messenger", "phone",
			"",
			outcome{Status: 422, Page: true, Messages: 1, Beside: true, Kept: []string{`value="12345"`}}},
		{"a crowdfund without a name", "/crowdfunds",
			url.Values{"name": {""}, "notes": {"my notes"}, "link": {"https://example.com/c"}}, "/crowdfunds", "name",
			"The name is required",
			outcome{Status: 422, Page: true, Messages: 1, Beside: true, Kept: []string{"my notes", `value="https://example.com/c"`}}},
		{"a wrong current password: never sent back", "/settings/password",
			url.Values{"current": {"not my password"}, "new": {"a brand new password"}}, "/settings", "current",
			"The current password is wrong.",
			outcome{Status: 401, Page: true, Messages: 1, Beside: true}},
		{"no page known: the error page", "/packages/tags",
			url.Values{"mode": {"add"}, "tags": {"x"}}, "", "",
			"Select at least one package.",
			outcome{Status: 422, Messages: 1}},
		{"bulk Apply succeeds and says so", "/packages/tags",
			url.Values{"back": {"/?view=list"}, "id": {fmt.Sprint(knight.ID), fmt.Sprint(pk["Red Dragon Pack.zip"].ID)}, "mode": {"add"}, "tags": {"Fresh"}}, "", "",
			"",
			outcome{Status: 303, Location: "/?done=tags-added&n=2&view=list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", e.ts.URL+tt.path, strings.NewReader(tt.form.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", e.ts.URL)
			if tt.referer != "" {
				req.Header.Set("Referer", e.ts.URL+tt.referer)
			}
			req.AddCookie(c)
			resp, err := e.client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body := readAll(t, resp)
			got := outcome{Status: resp.StatusCode, Location: resp.Header.Get("Location"),
				Page: resp.StatusCode != http.StatusSeeOther && !strings.Contains(body, "Back to the start page")}
			msg := tt.message
			if msg == "" {
				msg = fieldErrorText(body)
			}
			if msg != "" {
				got.Messages = strings.Count(html.UnescapeString(body), msg)
			}
			if tt.field != "" && got.Page {
				got.Beside = besideField(body, tt.field)
			}
			for _, secret := range []string{"not my password", "a brand new password"} {
				if strings.Contains(body, secret) {
					t.Errorf("the page sends a password back")
				}
			}
			for _, k := range tt.want.Kept {
				if strings.Contains(html.UnescapeString(body), html.UnescapeString(k)) {
					got.Kept = append(got.Kept, k)
				}
			}
			if os.Getenv("DUMP") != "" {
				_ = os.WriteFile("/tmp/cu/dump.html", []byte(body), 0o644)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got  %+v\nwant %+v\n%s", got, tt.want, excerpt(body))
			}
		})
	}
	// The successful post changed the packages, and its page says so.
	p, _ := e.db.FindPackageByID(context.Background(), knight.ID)
	if !strings.Contains(strings.Join(p.Tags, ","), "Fresh") {
		t.Errorf("tags after the bulk edit: %q", p.Tags)
	}
	if _, body := e.do(nil, "GET", "/?done=tags-added&n=2&view=list", nil, c); !strings.Contains(body, "Tags added to 2 packages.") {
		t.Error("the catalog does not confirm the bulk edit")
	}
}

// fieldErrorText returns the text of the page's first field error.
func fieldErrorText(body string) string {
	const open = `<span class="field-error" role="alert">`
	i := strings.Index(body, open)
	if i < 0 {
		return ""
	}
	rest := body[i+len(open):]
	return html.UnescapeString(rest[:strings.Index(rest, "<")])
}

// besideField reports whether the page's field error is in the form that
// holds the field named field.
func besideField(body, field string) bool {
	for _, form := range strings.Split(body, "<form")[1:] {
		form, _, _ = strings.Cut(form, "</form>")
		if strings.Contains(form, `name="`+field+`"`) && strings.Contains(form, `class="field-error"`) {
			return true
		}
	}
	return false
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

func excerpt(body string) string {
	if i := strings.Index(body, "<main>"); i >= 0 {
		body = body[i:]
	}
	if len(body) > 1500 {
		body = body[:1500]
	}
	return body
}

// TestFormOrigin: the page a failed form shows again is its own "back"
// (local only), else its Referer from this site, else the path it posted
// to; never another site.
func TestFormOrigin(t *testing.T) {
	tests := []struct {
		name, back, referer, want string
	}{
		{"back", "/?tab=groups&view=list", "http://hoard.test/elsewhere", "/?tab=groups&view=list"},
		{"back elsewhere", "https://evil.example/x", "", "/"},
		{"referer of this site", "", "http://hoard.test/packages/7?fq=stl", "/packages/7?fq=stl"},
		{"referer of another site", "", "http://evil.example/packages/7", "/admin/invites"},
		{"nothing", "", "", "/admin/invites"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			form := url.Values{}
			if tt.back != "" {
				form.Set("back", tt.back)
			}
			r, err := http.NewRequest("POST", "http://hoard.test/admin/invites", strings.NewReader(form.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tt.referer != "" {
				r.Header.Set("Referer", tt.referer)
			}
			if got := formOrigin(r); got != tt.want {
				t.Errorf("formOrigin = %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzFormOrigin: whatever a form's "back" field and Referer say, the page
// shown again is a path of this site.
func FuzzFormOrigin(f *testing.F) {
	for _, seed := range [][2]string{{"/?q=x", ""}, {"//evil.example/x", ""}, {"", "http://hoard.test/a?b"}, {"", "https://hoard.test//evil"},
		{"/\\evil", ""}, {"", "javascript:alert(1)"}, {"/%2F%2Fevil", "http://hoard.test/"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, back, referer string) {
		r, err := http.NewRequest("POST", "http://hoard.test/admin/invites", strings.NewReader(url.Values{"back": {back}}.Encode()))
		if err != nil {
			t.Skip()
		}
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Referer", referer)
		got := formOrigin(r)
		if localPath(got) != got || !strings.HasPrefix(got, "/") || strings.HasPrefix(got, "//") {
			t.Fatalf("formOrigin(back %q, referer %q) = %q, not a local path", back, referer, got)
		}
	})
}
