package web

import (
	"net/http"
	"sync"

	"github.com/go-chi/chi/v5"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/dav"
)

// davPrefix is where the read-only WebDAV view of the catalog is mounted.
const davPrefix = "/dav"

// davHandler is the WebDAV handler, made on first use (it needs the
// download service).
type davHandler struct {
	once sync.Once
	h    http.Handler
}

// handleDAV serves the read-only WebDAV view to a user who presents an
// app token as Basic auth's password (WebDAV clients know no other way),
// or to a signed-in browser session. Others get a Basic challenge. Each
// GET of a file counts against the user's download limit.
func (s *Server) handleDAV(w http.ResponseWriter, r *http.Request) error {
	user := userFrom(r.Context())
	if _, secret, ok := r.BasicAuth(); ok {
		u, err := s.userFromToken(r, secret)
		if err != nil {
			if hoard.ErrorCode(err) == hoard.EUNAUTHORIZED {
				w.Header().Set("WWW-Authenticate", `Basic realm="hoard", charset="UTF-8"`)
			}
			return err
		}
		user = u
	}
	if user == nil {
		w.Header().Set("WWW-Authenticate", `Basic realm="hoard", charset="UTF-8"`)
		return hoard.Errorf(hoard.EUNAUTHORIZED, "Sign in with an app token (Settings → App tokens) as the password.")
	}
	if s.deps.Downloads == nil {
		return errNoDownloads
	}
	if r.Method == http.MethodGet {
		end, err := s.deps.Downloads.Begin(user.ID)
		if err != nil {
			return err
		}
		defer end()
		s.deps.Metrics.Download("dav", "served")
	}
	s.dav.once.Do(func() { s.dav.h = dav.New(s.deps.DB, s.deps.Downloads, davPrefix, s.deps.Logger) })
	s.dav.h.ServeHTTP(w, r)
	return nil
}

// WebDAV's methods are routed like the standard ones, so that the mount
// answers them (PROPFIND lists; the others are refused there with 405).
func init() {
	for _, m := range []string{"PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK"} {
		chi.RegisterMethod(m)
	}
}
