// Package web serves hoard's web application: server-rendered pages and JSON
// routes, all declared in one table (routes.go). Handlers return an error;
// one adapter (errors.go) maps root error codes to a status page or a JSON
// error, so handlers never write error responses themselves.
package web

import (
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/store"
)

//go:embed templates/*.html
var templateFS embed.FS

var templates = template.Must(template.ParseFS(templateFS, "templates/*.html"))

// Deps are what the web application needs.
type Deps struct {
	DB       *store.DB
	Queue    *queue.Client // insert-only client; jobs are enqueued in the caller's transaction
	Logger   *slog.Logger
	AppURL   string
	Version  string
	Database string // a description of the database in use, for the status page
	Started  time.Time
}

// Server is the web application.
type Server struct {
	deps   Deps
	router chi.Router
}

// New builds the web application.
func New(deps Deps) *Server {
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.Started.IsZero() {
		deps.Started = time.Now()
	}
	s := &Server{deps: deps, router: chi.NewRouter()}
	s.router.Use(securityHeaders)
	for _, rt := range s.routes() {
		s.router.Method(rt.Method, rt.Pattern, s.handle(rt.Handler))
	}
	s.router.NotFound(s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return errNotFound
	}))
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

// securityHeaders sets headers every response carries.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		next.ServeHTTP(w, r)
	})
}
