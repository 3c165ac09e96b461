package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hoard/hoard"
)

// expected is the status each role gets from each route when called with
// no form data. Every route of the table must have a row: adding a route
// without deciding who may use it fails this test.
var expected = map[string][3]int{ // anonymous, USER, ADMIN
	"GET /":                                                     {303, 200, 200},
	"GET /status":                                               {200, 200, 200},
	"GET /packages/{id}":                                        {303, 404, 404},
	"GET /creators/{name}":                                      {303, 200, 200},
	"GET /tags/{tag}":                                           {303, 200, 200},
	"GET /packages/{id}/preview":                                {303, 404, 404},
	"GET /packages/{id}/download":                               {303, 404, 404},
	"GET /packages/download":                                    {303, 422, 422},
	"GET /groups/{id}/download":                                 {303, 404, 404},
	"GET /crowdfunds/{id}/download":                             {303, 404, 404},
	"POST /packages/tags":                                       {401, 403, 422},
	"POST /packages/creator":                                    {401, 403, 422},
	"GET /api/packages":                                         {401, 200, 200},
	"GET /uploads":                                              {303, 200, 200},
	"GET /crowdfunds":                                           {303, 200, 200},
	"POST /crowdfunds":                                          {401, 422, 422},
	"GET /crowdfunds/{id}":                                      {303, 404, 404},
	"POST /crowdfunds/{id}":                                     {401, 404, 404},
	"POST /crowdfunds/{id}/delete":                              {401, 404, 404},
	"POST /crowdfunds/{id}/packages":                            {401, 404, 404},
	"GET /api/packages/new":                                     {401, 200, 200},
	"POST /crowdfunds/{id}/packages/{packageId}/delete":         {401, 404, 404},
	"POST /crowdfunds/{id}/send-all":                            {401, 404, 404},
	"GET /api/crowdfunds/{id}/packages/search":                  {401, 404, 404},
	"GET /uploads/{id}":                                         {303, 404, 404},
	"POST /api/uploads":                                         {401, 422, 422},
	"GET /api/uploads/{id}":                                     {401, 404, 404},
	"POST /uploads/{id}/retry":                                  {401, 404, 404},
	"POST /uploads/{id}/delete":                                 {401, 404, 404},
	"POST /packages/send":                                       {401, 422, 422},
	"POST /packages/{id}/preview":                               {401, 403, 404},
	"POST /packages/{id}/repair":                                {401, 403, 404},
	"POST /packages/{id}/preview/extract":                       {401, 403, 404},
	"GET /api/packages/{id}/preview/extract/{extractionId}":     {401, 404, 404},
	"POST /skipped/{id}/retry":                                  {401, 403, 404},
	"POST /groups":                                              {401, 403, 422},
	"GET /groups/{id}":                                          {303, 404, 404},
	"GET /groups/{id}/preview":                                  {303, 404, 404},
	"POST /groups/{id}/preview":                                 {401, 403, 404},
	"POST /groups/{id}/rename":                                  {401, 403, 404},
	"POST /groups/{id}/packages/{packageId}/remove":             {401, 403, 404},
	"POST /groups/{id}/dissolve":                                {401, 403, 404},
	"POST /groups/{id}/rules":                                   {401, 403, 404},
	"POST /groups/{id}/rules/{ruleId}/delete":                   {401, 403, 404},
	"POST /groups/{id}/merge/start":                             {401, 403, 404},
	"POST /groups/{id}/merge":                                   {401, 403, 404},
	"POST /groups/{id}/send":                                    {401, 404, 404},
	"POST /api/messenger/bot/send":                              {401, 422, 422},
	"GET /api/messenger/bot/send/{id}":                          {401, 404, 404},
	"GET /api/messenger/bot/sends":                              {401, 403, 200},
	"GET /api/packages/{id}":                                    {401, 404, 404},
	"GET /api/packages/{id}/files":                              {401, 404, 404},
	"GET /api/packages/{id}/preview":                            {401, 404, 404},
	"GET /healthz":                                              {200, 200, 200},
	"GET /readyz":                                               {200, 200, 200},
	"GET /static/*":                                             {200, 200, 200},
	"GET /favicon.ico":                                          {200, 200, 200},
	"GET /login":                                                {200, 303, 303},
	"POST /login":                                               {422, 422, 422},
	"GET /register":                                             {200, 200, 200},
	"POST /register":                                            {422, 422, 422},
	"POST /logout":                                              {401, 303, 303},
	"GET /settings":                                             {303, 200, 200},
	"POST /settings/password":                                   {401, 401, 401}, // wrong current password
	"POST /settings/messenger/link-code":                        {401, 200, 200},
	"POST /settings/messenger/unlink":                           {401, 303, 303},
	"POST /settings/subscriptions":                              {401, 422, 422},
	"POST /settings/subscriptions/{id}/delete":                  {401, 404, 404},
	"POST /settings/tokens":                                     {401, 422, 422}, // no name
	"POST /settings/tokens/{id}/revoke":                         {401, 404, 404},
	"GET /api/openapi.json":                                     {200, 200, 200},
	"GET /api/messenger/bot/my-sends":                           {401, 200, 200},
	"POST /settings/sign-in/{provider}/link":                    {401, 404, 404}, // no provider configured
	"POST /settings/sign-in/{provider}/unlink":                  {401, 404, 404}, // nothing linked
	"POST /auth/{provider}/login":                               {404, 404, 404},
	"GET /auth/{provider}/callback":                             {404, 404, 404},
	"GET /admin/invites":                                        {303, 403, 200},
	"GET /admin/messenger":                                      {303, 403, 200},
	"POST /admin/messenger/channels/{channelId}":                {401, 403, 404},
	"GET /admin/messenger/channels/{channelId}":                 {303, 403, 404},
	"GET /api/messenger/channels/{channelId}/topics":            {401, 403, 404},
	"POST /api/messenger/channels/{channelId}/topics/{topicId}": {401, 403, 422},
	"GET /api/ingestion/status":                                 {401, 403, 200},
	"POST /api/ingestion/disable-active-topic":                  {401, 403, 409},
	"POST /api/ingestion/trigger":                               {401, 403, 202},
	"POST /admin/messenger/channels/{channelId}/rescan":         {401, 403, 404},
	"POST /api/notifications/repair":                            {401, 403, 422},
	"POST /admin/messenger/accounts/{accountId}/delete":         {401, 403, 404},
	"POST /admin/messenger/rebuild":                             {401, 403, 409}, // no destination channel
	"GET /api/rebuild/status":                                   {401, 403, 200},
	"POST /admin/messenger/joins":                               {401, 403, 422}, // no reference
	"GET /api/messenger/joins":                                  {401, 403, 200},
	"POST /admin/messenger/destination":                         {401, 403, 422},
	"POST /admin/messenger/accounts":                            {401, 403, 422}, // no phone
	"GET /api/messenger/accounts":                               {401, 403, 200},
	"POST /admin/messenger/accounts/{accountId}/login":          {401, 403, 404},
	"POST /admin/messenger/accounts/{accountId}/code":           {401, 403, 422}, // no code
	"POST /admin/messenger/accounts/{accountId}/password":       {401, 403, 422},
	"GET /notifications":                                        {303, 403, 200},
	"GET /api/notifications":                                    {401, 403, 200},
	"POST /api/notifications/read-all":                          {401, 403, 200},
	"POST /api/notifications/clear":                             {401, 403, 200},
	"POST /api/notifications/{id}/read":                         {401, 403, 404},
	"POST /api/notifications/{id}/dismiss":                      {401, 403, 404},
	"POST /admin/invites":                                       {401, 403, 303},
	"POST /admin/invites/{id}/delete":                           {401, 403, 404},
	"* /admin/river":                                            {303, 403, 200},
	"* /dav":                                                    {401, 404, 404},
}

// concretePath fills a route pattern with example values.
func concretePath(pattern string) string {
	p := strings.ReplaceAll(pattern, "{id}", "999999")
	p = strings.ReplaceAll(p, "{channelId}", "999999")
	p = strings.ReplaceAll(p, "{topicId}", "5")
	p = strings.ReplaceAll(p, "{packageId}", "999999")
	p = strings.ReplaceAll(p, "{accountId}", "999999")
	p = strings.ReplaceAll(p, "{extractionId}", "999999")
	p = strings.ReplaceAll(p, "{provider}", "oidc")
	p = strings.ReplaceAll(p, "/static/*", "/static/app.css")
	if p == "/admin/river" {
		p = "/admin/river/"
	}
	return p
}

func TestAuthorizationMatrix(t *testing.T) {
	e := newEnv(t)
	user, _ := e.user(hoard.RoleUser)
	admin, _ := e.user(hoard.RoleAdmin)
	seen := map[string]bool{}
	for _, rt := range e.srv.routes() {
		method := rt.Method
		if rt.Mount {
			method = "*"
		}
		key := method + " " + rt.Pattern
		seen[key] = true
		want, ok := expected[key]
		if !ok {
			t.Errorf("route %s has no row in the authorization matrix", key)
			continue
		}
		if method == "*" {
			method = http.MethodGet
		}
		for i, who := range []*hoard.User{nil, user, admin} {
			var cookie *http.Cookie
			if who != nil {
				cookie = e.session(who)
			}
			resp, body := e.do(nil, method, concretePath(rt.Pattern), map[string][]string{}, cookie)
			if method == http.MethodGet {
				resp, body = e.do(nil, method, concretePath(rt.Pattern), nil, cookie)
			}
			if resp.StatusCode != want[i] {
				t.Errorf("%s as %s = %d, want %d\n%.300s", key, []string{"anonymous", "USER", "ADMIN"}[i], resp.StatusCode, want[i], body)
			}
		}
	}
	for key := range expected {
		if !seen[key] {
			t.Errorf("matrix row %s has no route", key)
		}
	}
}

func TestCuratorAccessFollowsSetting(t *testing.T) {
	for _, open := range []bool{false, true} {
		e := newEnv(t, func(d *Deps) { d.UsersCanCurate = open })
		user, _ := e.user(hoard.RoleUser)
		h := e.srv.authorize(Curator, func(w http.ResponseWriter, r *http.Request) error { w.WriteHeader(204); return nil })
		e.srv.router.Method(http.MethodPost, "/test/curate", h)
		resp, _ := e.do(nil, http.MethodPost, "/test/curate", map[string][]string{}, e.session(user))
		want := map[bool]int{false: 403, true: 204}[open]
		if resp.StatusCode != want {
			t.Errorf("USERS_CAN_CURATE=%v: USER got %d, want %d", open, resp.StatusCode, want)
		}
	}
}
