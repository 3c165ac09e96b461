package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
)

// hostileValues are what the route fuzz test puts into parameters: NULs,
// invalid UTF-8, numbers out of every range, negative numbers, values far
// past every bound, and text that means something to SQL, HTML, URLs and
// LIKE patterns.
var hostileValues = []string{
	"\x00", "a\x00b", "\xff\xfe\xfd", "\xc3\x28", "\x1b[31m", "\u202e\u200b",
	"99999999999999999999999", "-99999999999999999999999", "9223372036854775807", "-9223372036854775808",
	"-1", "0", "1e400", "NaN", "0x10", "1.5",
	"", " ", "\t\r\n",
	strings.Repeat("a", 50_000), strings.Repeat("é", maxParamLen+1), strings.Repeat("x/", 2100),
	"../../etc/passwd", "<script>alert(1)</script>", "'; DROP TABLE packages; --", "%00", "%_\\", "//evil.example",
}

// hostileBodies are request bodies sent to every POST route, with their
// content types.
var hostileBodies = []struct{ contentType, body string }{
	{"application/json", `{"package_id": 99999999999999999999999}`},
	{"application/json", `{"package_id": -1, "notification_id": -1}`},
	{"application/json", `{"package_ids": [` + strings.Repeat("1,", 2000) + `1]}`},
	{"application/json", `{"group_id": "\u0000"}`},
	{"application/json", `{"notification_id": 1e400}`},
	{"application/json", `[` + strings.Repeat(`[`, 10000)},
	{"application/json", "\xff\xfe"},
	{"application/x-www-form-urlencoded", "a=%zz&;=;&%00=%00"},
	{"application/x-www-form-urlencoded", "q=" + strings.Repeat("a", maxFormBytes+1)},
	{"multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"group_name\"\r\n\r\n\x00\r\n--x--\r\n"},
	{"multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"files\"; filename=\"\x00\xff../../a.zip\"\r\n\r\nPK\r\n--x--\r\n"},
	{"multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n\r\n\x89PNG\r\n--x"},
	{"multipart/form-data", "not multipart at all"},
	{"text/plain", "\x00"},
}

// commonParams are read by the adapter and helpers of many routes (the
// notice after an action, page forms, where a form returns to).
var commonParams = []string{"from", "done", "sent", "back", "next", "changed", "extraction"}

// declaredParams lists the parameters a route declares: its Params' form
// tags, those of the structs it embeds included.
func declaredParams(rt route) []string {
	if rt.Params == nil {
		return nil
	}
	var names []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("form"), ",")
			switch {
			case f.Anonymous && f.Type.Kind() == reflect.Struct && name == "":
				walk(f.Type)
			case name != "" && name != "-":
				names = append(names, name)
			}
		}
	}
	walk(reflect.TypeOf(rt.Params))
	return names
}

// everyParamName is every parameter any route declares, and the common
// ones: the fuzz test sends all of them to every route at once, so that a
// handler reading one it did not declare meets hostile values too.
func everyParamName(routes []route) []string {
	names := slices.Clone(commonParams)
	for _, rt := range routes {
		names = append(names, declaredParams(rt)...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// fuzzWorld is a database with one of everything, so that hostile
// parameters reach the handlers' deeper code, and the ids to put into path
// parameters.
type fuzzWorld struct {
	users [3]*hoard.User // anonymous (nil), USER, ADMIN
	ids   map[string]int64
}

// seedFuzzWorld stores a catalog, a group, crowdfunds, a notification, an
// upload, an invite, a skipped package, a messenger account and a send
// request.
func (e *testEnv) seedFuzzWorld() fuzzWorld {
	e.t.Helper()
	ctx := context.Background()
	must := func(err error) {
		if err != nil {
			e.t.Fatal(err)
		}
	}
	user, _ := e.user(hoard.RoleUser)
	admin, _ := e.user(hoard.RoleAdmin)
	pk := e.seedCatalog()
	p := pk["Red Dragon Pack.zip"]
	g, err := e.db.CreateManualGroup(ctx, "Dragons", []int64{p.ID, pk["Dragon_Bust_v2.stl"].ID})
	must(err)
	cf := &hoard.Crowdfund{UserID: admin.ID, Name: "Mammoth Kickstarter", DeliveryStatus: hoard.DeliveryNone, PaymentStatus: hoard.PaymentPaid}
	must(e.db.SaveCrowdfund(ctx, cf))
	must(e.db.SaveCrowdfund(ctx, &hoard.Crowdfund{UserID: user.ID, Name: "Mine", DeliveryStatus: hoard.DeliveryNone, PaymentStatus: hoard.PaymentUnpaid}))
	n := &hoard.Notification{Type: hoard.NotifyMissingPart, Severity: hoard.SeverityError, Title: "Missing part", PackageID: p.ID, DedupKey: "fuzz"}
	_, err = e.db.CreateNotification(ctx, n)
	must(err)
	up, err := e.db.CreateManualUpload(ctx, admin.ID, "fuzz")
	must(err)
	inv := e.invite(1, time.Hour)
	invite, err := e.db.FindInviteByCode(ctx, inv)
	must(err)
	acc := e.signedInAccount("+15550001234")
	x, err := e.db.CreatePreviewExtraction(ctx, p.ID, "Dragon/body.stl", admin.ID)
	must(err)
	e.link(admin, 4242)
	sendID := storetest.SendRequest(e.t, e.db, storetest.SendRequestOpts{UserID: admin.ID, PackageID: p.ID, PlatformUserID: 4242})
	skippedID := storetest.Skipped(e.t, e.db, storetest.SkippedOpts{SourceChannelID: p.SourceChannelID, SourceMessageID: 99, FileName: "x.zip"}).ID
	return fuzzWorld{users: [3]*hoard.User{nil, user, admin}, ids: map[string]int64{
		"/packages/": p.ID, "/api/packages/": p.ID, "/groups/": g.ID, "/crowdfunds/": cf.ID, "/api/crowdfunds/": cf.ID,
		"/uploads/": up.ID, "/api/uploads/": up.ID, "/api/notifications/": n.ID, "/admin/invites/": invite.ID,
		"/skipped/": skippedID, "/api/messenger/bot/send/": sendID,
		"{channelId}": p.SourceChannelID, "{accountId}": acc.ID, "{topicId}": 5, "{packageId}": p.ID, "{extractionId}": x.ID,
		"another package": pk["Knight Helmet.rar"].ID,
	}}
}

// path fills a route pattern's parameters with the world's ids, or with
// value when it is not "" (every parameter at once).
func (w fuzzWorld) path(pattern, value string) string {
	var b strings.Builder
	rest := pattern
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.IndexByte(rest, '}')
		b.WriteString(rest[:i])
		name := rest[i : j+1]
		id, ok := w.ids[name]
		if !ok {
			id = w.ids[b.String()]
		}
		if value != "" {
			b.WriteString(url.PathEscape(value))
		} else {
			b.WriteString(strconv.FormatInt(id, 10))
		}
		rest = rest[j+1:]
	}
	p := strings.Replace(b.String(), "/static/*", "/static/app.css", 1)
	if p == riverUIPrefix {
		p = riverUIAPIJobs
	}
	return p
}

// fuzzRequest is one request of the route fuzz test.
type fuzzRequest struct {
	who         int // index into fuzzWorld.users
	method      string
	path        string
	query, form url.Values
	contentType string
	body        []byte
}

// TestRoutesRefuseHostileInput walks the route table and sends every route
// hostile input — in each parameter it declares and the common ones, in
// all of them at once, in its path parameters and, for POST routes, as
// JSON, broken forms and broken multipart bodies — as anonymous, USER and
// ADMIN. No answer may be a 5xx (an error the client did not cause) and no
// handler may panic (the connection would break).
func TestRoutesRefuseHostileInput(t *testing.T) {
	e := newEnv(t)
	w := e.seedFuzzWorld()
	routes := e.srv.routes()
	every := everyParamName(routes)
	var reqs []fuzzRequest
	for _, rt := range routes {
		method := rt.Method
		if rt.Mount {
			method = http.MethodGet
		}
		path := w.path(rt.Pattern, "")
		for who := range w.users {
			// Anonymous visitors and users without the role are turned
			// away before any parameter is read: a sample is enough.
			reaches := who == 2 || rt.Access == Public || (who == 1 && rt.Access == SignedIn)
			for i, v := range hostileValues {
				if !reaches && i%8 != 0 {
					continue
				}
				all := url.Values{}
				for _, name := range every {
					all.Set(name, v)
				}
				reqs = append(reqs, newFuzzRequest(who, method, path, all))
				if who != 2 {
					continue
				}
				if strings.Contains(rt.Pattern, "{") {
					reqs = append(reqs, newFuzzRequest(who, method, w.path(rt.Pattern, v), nil))
				}
				if method == http.MethodPost {
					ct, body := multipartBody(every, v)
					reqs = append(reqs, fuzzRequest{who: who, method: method, path: path, contentType: ct, body: body})
				}
			}
		}
		for _, name := range declaredParams(rt) {
			for _, v := range hostileValues {
				reqs = append(reqs, newFuzzRequest(2, method, path, url.Values{name: {v}}))
			}
		}
		if rt.Mount {
			// The River UI's API, with hostile values in its own
			// parameters and path segments.
			for _, v := range hostileValues {
				q := url.Values{}
				for _, name := range []string{"ids", "kinds", "limit", "priorities", "state", "queues"} {
					q.Set(name, v)
				}
				reqs = append(reqs, newFuzzRequest(2, method, riverUIAPIJobs, q))
				for _, p := range []string{"/api/jobs/", "/api/queues/", "/api/workflows/"} {
					reqs = append(reqs, newFuzzRequest(2, method, riverUIPrefix+p+url.PathEscape(v), nil))
				}
			}
		}
		if method == http.MethodPost {
			for _, b := range hostileBodies {
				reqs = append(reqs, fuzzRequest{who: 2, method: method, path: path, contentType: b.contentType, body: []byte(b.body)})
			}
		}
	}
	var mu sync.Mutex
	failures := 0
	e.sendAll(w, reqs, func(r fuzzRequest, status int, err error) {
		if err == nil && status < 500 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if failures++; failures <= 30 {
			t.Errorf("%s as %s = %d %v", r, []string{"anonymous", "USER", "ADMIN"}[r.who], status, err)
		}
	})
	if failures > 30 {
		t.Errorf("… and %d more", failures-30)
	}
	t.Logf("%d requests", len(reqs))
}

// newFuzzRequest puts params into the query of a GET and the form of a POST
// (and its query: handlers may read either).
func newFuzzRequest(who int, method, path string, params url.Values) fuzzRequest {
	r := fuzzRequest{who: who, method: method, path: path, query: params}
	if method == http.MethodPost {
		r.form, r.contentType = params, "application/x-www-form-urlencoded"
		if params == nil {
			r.form = url.Values{}
		}
	}
	return r
}

// String names a request for failure messages, with long values cut.
func (r fuzzRequest) String() string {
	short := func(v url.Values) string {
		var parts []string
		for k, vals := range v {
			for _, s := range vals {
				if len(s) > 24 {
					s = s[:24] + fmt.Sprintf("…(%d bytes)", len(s))
				}
				parts = append(parts, fmt.Sprintf("%s=%q", k, s))
			}
		}
		slices.Sort(parts)
		return strings.Join(parts, " ")
	}
	s := r.method + " " + r.path
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	if len(r.query) > 0 {
		s += " query: " + short(r.query)
	}
	if r.body != nil {
		b := string(r.body)
		if len(b) > 60 {
			b = b[:60] + "…"
		}
		s += fmt.Sprintf(" body (%s): %q", r.contentType, b)
	}
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// sendAll sends the requests, four at a time, each with a fresh session of
// its user (a request may sign it out), and reports each outcome.
func (e *testEnv) sendAll(w fuzzWorld, reqs []fuzzRequest, report func(r fuzzRequest, status int, err error)) {
	e.t.Helper()
	stop := make(chan struct{})
	defer close(stop)
	cookies := map[int]chan *http.Cookie{}
	for who, u := range w.users {
		if u == nil {
			continue
		}
		ch := make(chan *http.Cookie, 64)
		cookies[who] = ch
		go func() {
			for {
				c, err := e.newSession(u)
				if err != nil {
					return
				}
				select {
				case ch <- c:
				case <-stop:
					return
				}
			}
		}()
	}
	client := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	work := make(chan fuzzRequest)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for r := range work {
				status, err := e.send(client, r, cookies)
				report(r, status, err)
			}
		})
	}
	for _, r := range reqs {
		work <- r
	}
	close(work)
	wg.Wait()
}

// send sends one request and returns its status.
func (e *testEnv) send(client *http.Client, r fuzzRequest, cookies map[int]chan *http.Cookie) (int, error) {
	target := e.ts.URL + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	var body io.Reader
	switch {
	case r.body != nil:
		body = bytes.NewReader(r.body)
	case r.form != nil:
		body = strings.NewReader(r.form.Encode())
	}
	req, err := http.NewRequest(r.method, target, body)
	if err != nil {
		return 0, err
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	if r.method != http.MethodGet {
		req.Header.Set("Origin", e.ts.URL) // as a browser does: changes without it are refused
	}
	if ch, ok := cookies[r.who]; ok {
		req.AddCookie(<-ch)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// multipartBody builds a multipart form with every field set to value, and
// a file part named value in each file field.
func multipartBody(fields []string, value string) (string, []byte) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, f := range fields {
		_ = mw.WriteField(f, value)
	}
	for _, f := range []string{"files", "image"} {
		if part, err := mw.CreateFormFile(f, value); err == nil {
			_, _ = part.Write([]byte(value))
		}
	}
	_ = mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

// FuzzRouteParams sends one parameter with a fuzzed value (as query and as
// form) to one route of the table, as an administrator, who reaches every
// handler: no 5xx, no panic.
func FuzzRouteParams(f *testing.F) {
	e := newEnv(f)
	w := e.seedFuzzWorld()
	routes := e.srv.routes()
	names := everyParamName(routes)
	for i, v := range hostileValues {
		if len(v) < 1000 {
			f.Add(uint16(i), uint16(i*7), v, false)
			f.Add(uint16(i*3), uint16(i), v, true)
		}
	}
	client := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	f.Fuzz(func(t *testing.T, route, name uint16, value string, inPath bool) {
		rt := routes[int(route)%len(routes)]
		method := rt.Method
		if rt.Mount {
			method = http.MethodGet
		}
		path, params := w.path(rt.Pattern, ""), url.Values{names[int(name)%len(names)]: {value}}
		if inPath && strings.Contains(rt.Pattern, "{") {
			path, params = w.path(rt.Pattern, value), nil
		}
		cookie, err := e.newSession(w.users[2])
		if err != nil {
			t.Fatal(err)
		}
		ch := make(chan *http.Cookie, 1)
		ch <- cookie
		r := newFuzzRequest(2, method, path, params)
		if status, err := e.send(client, r, map[int]chan *http.Cookie{2: ch}); err != nil || status >= 500 {
			t.Fatalf("%s = %d %v", r, status, err)
		}
	})
}

// FuzzDecodeParams decodes fuzzed query strings into the parameter structs
// of routes: nothing panics, and whatever is accepted is clean text within
// the declared bounds.
func FuzzDecodeParams(f *testing.F) {
	for _, seed := range []string{"q=dragon&limit=20", "limit=0", "after=-1", "tag=a,b,%00", "q=%ff", "count=99999999999999999999",
		"fafter=2147483648", "id=1&id=x", "fetch_enabled=maybe", "tags=" + strings.Repeat("t,", 70), "q=" + strings.Repeat("é", 201)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		values, err := url.ParseQuery(raw)
		if err != nil || checkValues(values, nil) != nil {
			return
		}
		var cat catalogParams
		if decodeParams(values, &cat) == nil {
			for _, s := range append([]string{cat.Q, cat.Creator, cat.Type, cat.View}, cat.Tags...) {
				if checkText("field", s, maxParamBytes) != nil {
					t.Fatalf("accepted unclean text %q", s)
				}
			}
			for field, out := range map[string]bool{
				"q":       utf8.RuneCountInString(cat.Q) > maxParamLen,
				"limit":   cat.Limit != nil && (*cat.Limit < 1 || *cat.Limit > 200),
				"before":  cat.Before < 0,
				"channel": cat.Channel < 0,
			} {
				if out {
					t.Fatalf("accepted %s out of bounds: %+v", field, cat)
				}
			}
			if _, err := parseCatalogQuery(cat); err == nil && len(cat.Tags) > 0 {
				for _, tag := range cat.Tags {
					if tags, err := splitTags(tag); err == nil && len(tags) > maxTagsPerRequest {
						t.Fatalf("%d tags accepted", len(tags))
					}
				}
			}
		}
		var files filesParams
		if decodeParams(values, &files) == nil && files.After != nil && *files.After < -1 {
			t.Fatalf("after %d accepted", *files.After)
		}
		var tags tagsParams
		if decodeParams(values, &tags) == nil {
			if len(tags.IDs) > 500 || slices.ContainsFunc(tags.IDs, func(id int64) bool { return id <= 0 }) {
				t.Fatalf("ids %v accepted", tags.IDs)
			}
		}
		var inv invitesParams
		if decodeParams(values, &inv) == nil && inv.Count != nil && (*inv.Count < 1 || *inv.Count > 50) {
			t.Fatalf("count %d accepted", *inv.Count)
		}
	})
}
