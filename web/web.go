// Package web serves hoard's web application: server-rendered pages and JSON
// routes, all declared in one table (routes.go) with the access each needs.
// Handlers return an error; one adapter (errors.go) maps root error codes to
// a status page or a JSON error, so handlers never write error responses
// themselves. Every state-changing request passes Go's cross-origin
// protection.
package web

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/download"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/store"
	"riverqueue.com/riverui"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pages holds one template set per page: the base layout plus the page's
// "content". They are never executed: each server renders clones
// (pagesWith).
var pages = func() map[string]*template.Template {
	base := template.Must(template.New("").Funcs(templateFuncs).ParseFS(templateFS, "templates/base.html", "templates/_*.html"))
	out := map[string]*template.Template{}
	entries, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		name := strings.TrimSuffix(strings.TrimPrefix(e, "templates/"), ".html")
		if name == "base" || strings.HasPrefix(name, "_") {
			continue
		}
		out[name] = template.Must(template.Must(base.Clone()).ParseFS(templateFS, e))
	}
	return out
}()

// templateFuncs are the helpers templates may call.
var templateFuncs = template.FuncMap{
	"size":  humanSize,
	"date":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") },
	"join":  strings.Join,
	"list":  func(v ...string) []string { return v },
	"deref": func(b *bool) bool { return b != nil && *b },
	"dict": func(kv ...any) (map[string]any, error) {
		if len(kv)%2 != 0 {
			return nil, fmt.Errorf("dict: odd number of arguments")
		}
		m := make(map[string]any, len(kv)/2)
		for i := 0; i < len(kv); i += 2 {
			k, ok := kv[i].(string)
			if !ok {
				return nil, fmt.Errorf("dict: key %v is not a string", kv[i])
			}
			m[k] = kv[i+1]
		}
		return m, nil
	},
	// display shows platform text (names, captions, titles, entry paths)
	// with direction overrides and invisible controls neutralised.
	"display": hoard.DisplayText,
	// ago is a moment as people say it ("3 min ago"), in a <time> element
	// whose datetime the page's script keeps current and shows in local
	// time on hover.
	"ago": func(t time.Time) template.HTML { return agoHTML(t, time.Now()) },
	// creatorURL and tagURL are the pages of a creator and of a tag.
	"creatorURL": func(name string) string { return "/creators/" + url.PathEscape(name) },
	"tagURL":     func(tag string) string { return "/tags/" + url.PathEscape(tag) },
	// highlight escapes a file path with the search's text marked.
	"highlight":    highlightHTML,
	"filesMatched": filesMatchedText,
	// variant is a package's variant label ("supported", "75mm"), "" when
	// its file name names none; Deps.VariantLabel supplies it per server.
	"variant": func(string) string { return "" },
}

// fragments is a clone of the catalog page for the pieces rendered apart
// from any server (filter menus, suggestions): executing pages themselves
// would stop pagesWith from cloning them.
var fragments = template.Must(pages["catalog"].Clone())

// pagesWith are one server's pages: clones of pages (which are never
// executed, as html/template clones only templates that have not run) with
// the variant labeller bound when it is not nil. A clone shares the parsed
// templates and copies only their functions.
func pagesWith(variant func(fileName string) string) map[string]*template.Template {
	out := make(map[string]*template.Template, len(pages))
	for name, t := range pages {
		c := template.Must(t.Clone())
		if variant != nil {
			c.Funcs(template.FuncMap{"variant": variant})
		}
		out[name] = c
	}
	return out
}

// humanSize formats a byte count with binary units.
func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Deps are what the web application needs.
type Deps struct {
	DB     *store.DB
	Queue  *queue.Client // jobs are enqueued in the caller's transaction
	Logger *slog.Logger
	AppURL string
	// UsersCanCurate opens catalog curation to every signed-in user.
	UsersCanCurate bool
	// UploadDir receives manual uploads; MaxUploadBytes caps each file.
	UploadDir      string
	MaxUploadBytes int64
	// UploadQuotaBytes bounds what one user holds on the upload volume
	// (files kept plus uploads streaming; administrators are exempt):
	// 0 is DefaultUploadQuota, negative none.
	UploadQuotaBytes int64
	// UploadMinFreeBytes is the free space uploads leave on the upload
	// volume: 0 is DefaultUploadMinFree, negative none.
	UploadMinFreeBytes int64
	// UploadRetention is how long a published file is kept on the volume,
	// for the upload pages (the worker's clean-up removes it): 0 is
	// DefaultUploadRetention, negative until the next clean-up.
	UploadRetention time.Duration
	// FreeSpace probes the upload volume's free space (hoard.FreeBytes
	// when nil).
	FreeSpace hoard.FreeSpaceFunc
	// BotUsername is the bot's username, for t.me deep links ("" = none).
	BotUsername string
	// Secrets seals the login codes and passwords administrators submit for
	// messenger accounts (with AUTH_SECRET) before they reach the database;
	// without it those forms are refused.
	Secrets *messenger.Sealer
	// WorkerInterval is the time between scheduled ingestion cycles (for
	// the worker panel's countdown).
	WorkerInterval time.Duration
	Version        string
	Database       string // a description of the database in use
	Started        time.Time
	// SearchCacheTTL bounds how long a catalog search result may be
	// served from memory (0: a minute; negative: never); a change to the
	// catalog drops them all at once.
	SearchCacheTTL time.Duration
	// SessionCacheTTL bounds how long a signed-in request's session may
	// be served from memory (0: 5 s; negative: never); a change to users,
	// sessions or messenger links drops them all at once.
	SessionCacheTTL time.Duration
	// MaxConcurrentRequests bounds the requests served at once; the rest
	// wait their turn in arrival order (0: 2 per CPU; negative: no bound).
	MaxConcurrentRequests int
	// SignIn configures sign-in through identity providers (oidc.go); the
	// zero value offers passwords only.
	SignIn SignInConfig
	// StatementTimeout bounds each database statement of a request
	// (0: defaultStatementTimeout; negative: none): PostgreSQL cancels a
	// statement that runs longer, and the request answers 503. It applies
	// to web requests only, never to the worker's jobs on the same pool.
	StatementTimeout time.Duration
	// DemoNote, in the demo, tells on the messaging page how to add an
	// account to its emulator ("" otherwise).
	DemoNote string
	// Downloads serves packages' bytes to browsers and WebDAV clients
	// (nil: downloads answer 503 saying they are not set up).
	Downloads *download.Service
	// Metrics is told about every request and catalog search (default:
	// nobody).
	Metrics Metrics
	// VariantLabel names the variant of a design a file name holds
	// ("supported", "75mm", "v2"; "" for none), shown next to each package
	// (nil: none shown). cmd/hoard passes grouping.VariantLabel: web may
	// not import grouping, and the rule must be the one grouping keeps
	// variants together by.
	VariantLabel func(fileName string) string
}

// Metrics is told what the web application serves (metrics.Metrics
// implements it). Its methods must be safe for concurrent use and quick.
type Metrics interface {
	// HTTPRequest is one answered request: its route's pattern (chi's,
	// such as /packages/{id}; "" when no route matched), never its path.
	HTTPRequest(route, method string, status int, took time.Duration)
	// Search is one catalog search, answered from the cache or not.
	Search(cached bool, took time.Duration)
	// Download is one download request: package, part or group; served
	// or refused.
	Download(kind, outcome string)
}

// noMetrics is the Metrics of a server that reports to nobody.
type noMetrics struct{}

func (noMetrics) HTTPRequest(string, string, int, time.Duration) {}
func (noMetrics) Search(bool, time.Duration)                     {}
func (noMetrics) Download(string, string)                        {}

// defaultStatementTimeout bounds a web request's statements unless
// Deps.StatementTimeout says otherwise: the slowest catalog search at a
// million packages takes tens of milliseconds.
const defaultStatementTimeout = 2 * time.Second

// riverUIPrefix is where the River UI is mounted.
const riverUIPrefix = "/admin/river"

// Server is the web application.
type Server struct {
	deps    Deps
	dav     davHandler
	router  chi.Router
	handler http.Handler
	secure  bool // APP_URL is https: cookies are Secure
	riverUI *riverui.Handler

	titlesMu     sync.Mutex
	titles       map[int64]string
	sourceTitles map[int64]string // the source channels of titles
	titlesAt     time.Time

	// The filter bar's suggestions (its datalists, rendered), looked up
	// at most every titlesTTL.
	suggestMu   sync.Mutex
	suggestHTML template.HTML
	suggestAt   time.Time

	searches *searchCache
	// sessions keeps the sessions recent requests brought (sessioncache.go).
	sessions *sessionCache
	// cards keeps the result rows' markup by package (cards.go).
	cards *cardCache
	// pages are the page templates with this server's functions bound.
	pages map[string]*template.Template
	// files keeps the FileIndex of big archives for their file searches.
	files *fileIndexes

	// ingesting is the running cycle the catalog mentions, looked up at
	// most every ingestingTTL (firstminute.go).
	ingestingMu sync.Mutex
	ingesting   *ingestingNote
	ingestingAt time.Time
	providers   []identityProvider // sign-in through identity providers, in button order

	// passwordChecks counts the sign-in attempts (and current-password
	// checks) that got past the throttle to a password check.
	passwordChecks atomic.Int64

	// openapi is the API's OpenAPI document, made from the route table
	// at start (openapi.go).
	openapi []byte
}

// New builds the web application. Call Start before serving.
func New(deps Deps) (*Server, error) {
	dummyHash() // made before the first sign-in, which it must not slow down
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	deps.uploadDefaults()
	if deps.Started.IsZero() {
		deps.Started = time.Now()
	}
	u, err := url.Parse(deps.AppURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("web: APP_URL %q is not an absolute URL", deps.AppURL)
	}
	if deps.SearchCacheTTL == 0 {
		deps.SearchCacheTTL = defaultSearchCacheTTL
	}
	if deps.SessionCacheTTL == 0 {
		deps.SessionCacheTTL = defaultSessionCacheTTL
	}
	if deps.StatementTimeout == 0 {
		deps.StatementTimeout = defaultStatementTimeout
	}
	if deps.Metrics == nil {
		deps.Metrics = noMetrics{}
	}
	s := &Server{deps: deps, router: chi.NewRouter(), secure: u.Scheme == "https", searches: newSearchCache(deps.SearchCacheTTL),
		files: newFileIndexes(fileIndexBudget), pages: pagesWith(deps.VariantLabel), cards: newCardCache(deps.VariantLabel),
		sessions: newSessionCache(deps.SessionCacheTTL)}
	if s.providers, err = newProviders(deps.AppURL, deps.SignIn); err != nil {
		return nil, err
	}
	if deps.Queue != nil {
		s.riverUI, err = riverui.NewHandler(&riverui.HandlerOpts{
			Endpoints: riverui.NewEndpoints(deps.Queue, nil),
			Logger:    deps.Logger,
			Prefix:    riverUIPrefix,
		})
		if err != nil {
			return nil, fmt.Errorf("web: queue UI: %w", err)
		}
	}
	// HEAD is answered as GET without the body (download managers ask it
	// before a download, and ServeContent answers it without reading).
	s.router.Use(middleware.GetHead, s.measure, securityHeaders, s.boundStatements, s.loadSession)
	gate := newAdmission(deps.MaxConcurrentRequests)
	rts := s.routes()
	if s.openapi, err = openAPIDocument(rts, deps.Version, deps.AppURL, s.cookieName()); err != nil {
		return nil, fmt.Errorf("web: OpenAPI document: %w", err)
	}
	for _, rt := range rts {
		h := s.acceptTokens(rt, s.authorize(rt.Access, rt.checked()))
		if rt.Mount {
			s.router.Mount(rt.Pattern, h)
			continue
		}
		if rt.Method != http.MethodGet && rt.Access >= Curator {
			h = s.forgetSearchesAfter(h)
		}
		if !rt.Ungated {
			h = gate.wrap(h)
		}
		s.router.Method(rt.Method, rt.Pattern, h)
	}
	s.router.NotFound(s.handle(func(w http.ResponseWriter, r *http.Request) error { return errNotFound }))
	s.router.MethodNotAllowed(s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return hoard.Errorf(hoard.EINVALID, "Method not allowed.")
	}))
	cop := http.NewCrossOriginProtection()
	if err := cop.AddTrustedOrigin(u.Scheme + "://" + u.Host); err != nil {
		return nil, fmt.Errorf("web: trusted origin: %w", err)
	}
	cop.SetDenyHandler(s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return hoard.Errorf(hoard.EFORBIDDEN, "Cross-origin request refused.")
	}))
	s.handler = requireRequestOrigin(s.handle, cop.Handler(s.router))
	return s, nil
}

// requireRequestOrigin refuses (403) a state-changing request — any method
// but GET, HEAD, OPTIONS and WebDAV's PROPFIND — that says neither where it comes from
// (Origin) nor how it was made (Sec-Fetch-Site). http.CrossOriginProtection
// lets such requests through as not made by a browser, where no cookie
// would ride along unasked; but hoard's only credential for changes is its
// session cookie (app tokens are read-only: tokens.go), and its only
// state-changing requests without one sign in
// or register (a forged sign-in logs the victim into the forger's account).
// Every browser hoard supports sends Sec-Fetch-Site on every request and
// Origin on every POST, so its own pages always pass; a script that wants
// to change something must say its origin, and then passes the
// cross-origin check only when that is hoard's.
func requireRequestOrigin(handle func(handlerFunc) http.HandlerFunc, next http.Handler) http.Handler {
	refuse := handle(func(http.ResponseWriter, *http.Request) error {
		return hoard.Errorf(hoard.EFORBIDDEN, "Request refused: it has neither an Origin nor a Sec-Fetch-Site header. "+
			"Changes are accepted from hoard's pages in a browser, or from clients that send the Origin of hoard's address.")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		case "PROPFIND":
			// WebDAV's listing changes nothing (the mount refuses every
			// write method), and WebDAV clients send no Origin.
		default:
			if r.Header.Get("Sec-Fetch-Site") == "" && r.Header.Get("Origin") == "" {
				refuse(w, r)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Start starts the background parts (the queue UI, the watch on catalog
// changes that keeps the search cache current) and makes sure an
// administrator can get in: with no users yet, it logs a one-time link
// that registers the first administrator.
func (s *Server) Start(ctx context.Context) error {
	go s.watchChanges(ctx)
	s.discoverProviders(ctx)
	if s.riverUI != nil {
		if err := s.riverUI.Start(ctx); err != nil {
			return fmt.Errorf("web: start queue UI: %w", err)
		}
	}
	link, err := FirstAdminLink(ctx, s.deps.DB, s.deps.AppURL)
	if err != nil {
		return err
	}
	if link != "" {
		s.deps.Logger.Warn("no users yet: open this one-time link to register the first administrator (valid 24 h)", "link", link)
	}
	return nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// contentSecurityPolicy is the policy of every response: only this
// origin's scripts, styles and images, no framing, forms post here only.
const contentSecurityPolicy = "default-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'; form-action 'self'; base-uri 'self'"

// riverUIPolicy is the policy of the River UI under /admin/river: the same,
// except that its React components set inline styles. (Its schema library
// probes for eval once; the probe is refused and it works without.)
const riverUIPolicy = "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; form-action 'self'; base-uri 'self'"

// securityHeaders sets headers every response carries, those of the River
// UI mounted under /admin/river included (it sets none of its own).
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		if r.URL.Path == riverUIPrefix || strings.HasPrefix(r.URL.Path, riverUIPrefix+"/") {
			h.Set("Content-Security-Policy", riverUIPolicy)
		} else {
			h.Set("Content-Security-Policy", contentSecurityPolicy)
		}
		next.ServeHTTP(w, r)
	})
}

// measure tells the metrics how long each request took, by the pattern of
// the route that served it (read once routing is done), so that no path
// with an id in it ever becomes a label.
func (s *Server) measure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		status := ww.Status()
		if status == 0 { // nothing written: net/http answers 200
			status = http.StatusOK
		}
		s.deps.Metrics.HTTPRequest(chi.RouteContext(r.Context()).RoutePattern(), r.Method, status, time.Since(start))
	})
}

// boundStatements gives every request's database statements the
// statement timeout (store.WithStatementTimeout), the session lookup's and
// the River UI's included.
func (s *Server) boundStatements(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(store.WithStatementTimeout(r.Context(), s.deps.StatementTimeout)))
	})
}

// page is what every page template receives.
type page struct {
	Title  string
	User   *hoard.User
	Unread int64 // unread notifications, for administrators' bell
	// Linked reports whether the user has a messenger link; set for the
	// pages with send buttons (sendPages), which offer to link otherwise.
	Linked bool
	Error  string
	Notice string
	// Form is the failed form post the page shows again (forms.go); the
	// zero value when there is none.
	Form formState
	Data any
}

// sendPages are the pages with "send to my messenger account" buttons.
var sendPages = map[string]bool{"catalog": true, "package": true, "group": true, "crowdfund": true}

// render writes a page with a status code.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) error {
	t, ok := s.pages[name]
	if !ok {
		return fmt.Errorf("render: no page %q", name)
	}
	if p.User == nil {
		p.User = userFrom(r.Context())
	}
	if p.Form.Action == "" {
		p.Form = formFrom(r.Context())
	}
	if p.Notice == "" && p.Form.Action == "" {
		p.Notice = noticeOf(r)
	}
	if p.User.IsAdmin() {
		n, err := s.deps.DB.CountUnreadNotifications(r.Context())
		if err != nil {
			s.deps.Logger.Warn("count unread notifications", "err", err)
		}
		p.Unread = n
	}
	if sendPages[name] {
		p.Linked = s.isLinked(r)
	}
	// The content first, so that the layout around it knows whether it
	// showed a form's error; then the layout's head, the content's bytes as
	// they are (the templates' own output, escaped by them) and its foot.
	content := renderBuffers.Get().(*bytes.Buffer)
	defer putRenderBuffer(content)
	if err := t.ExecuteTemplate(content, "content", p); err != nil {
		return hoard.WrapError(hoard.EINTERNAL, err, "Could not render the page.")
	}
	buf := renderBuffers.Get().(*bytes.Buffer)
	defer putRenderBuffer(buf)
	if err := t.ExecuteTemplate(buf, "base-head", p); err != nil {
		return hoard.WrapError(hoard.EINTERNAL, err, "Could not render the page.")
	}
	buf.Write(content.Bytes())
	if err := t.ExecuteTemplate(buf, "base-foot", p); err != nil {
		return hoard.WrapError(hoard.EINTERNAL, err, "Could not render the page.")
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if _, err := w.Write(buf.Bytes()); err != nil {
		// The client left; the status is sent, there is nobody to tell.
		s.deps.Logger.Debug("write page", "err", err)
	}
	return nil
}

// renderBuffers are the buffers pages are rendered into, reused: a catalog
// page is some 50 KB, which a new buffer reached by doubling several
// times for every page.
var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putRenderBuffer returns buf to renderBuffers, unless an unusually big
// page grew it (it would hold that memory for good).
func putRenderBuffer(buf *bytes.Buffer) {
	if buf.Cap() > 1<<20 {
		return
	}
	buf.Reset()
	renderBuffers.Put(buf)
}

// redirect answers 303 See Other to a local path. Every redirect of the
// application goes through localPath, so none can leave the site, whatever
// a form's "back" or "next" field said.
func redirect(w http.ResponseWriter, r *http.Request, path string) error {
	http.Redirect(w, r, localPath(path), http.StatusSeeOther)
	return nil
}
