package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hoard/hoard"
)

// Session lifetime: sliding, refreshed at most once per touchEvery.
const (
	sessionTTL = 30 * 24 * time.Hour
	touchEvery = time.Hour
)

type ctxKey int

const (
	userKey ctxKey = iota
	sessionKey
)

func userFrom(ctx context.Context) *hoard.User {
	u, _ := ctx.Value(userKey).(*hoard.User)
	return u
}

func sessionFrom(ctx context.Context) *hoard.Session {
	s, _ := ctx.Value(sessionKey).(*hoard.Session)
	return s
}

// cookieName is the session cookie's name (hostCookieName).
func (s *Server) cookieName() string { return s.hostCookieName("hoard_session") }

// hostCookieName is name, over https with the __Host- prefix, which
// browsers only accept from a secure origin for the whole host.
func (s *Server) hostCookieName(name string) string {
	if s.secure {
		return "__Host-" + name
	}
	return name
}

// sessionID derives the stored id from the cookie token.
func sessionID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// loadSession puts the signed-in user, if any, into the request context.
func (s *Server) loadSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(s.cookieName())
		if err != nil || c.Value == "" || len(c.Value) > 128 {
			next.ServeHTTP(w, r)
			return
		}
		id := sessionID(c.Value)
		writes := !safeMethod(r.Method)
		sess, user, err := s.findSession(r, id, writes)
		switch {
		case hoard.ErrorCode(err) == hoard.ENOTFOUND:
			s.clearCookie(w)
			next.ServeHTTP(w, r)
			return
		case err != nil:
			// The database did not answer (busy, a statement timeout, a
			// lost connection): the session may well be live, so the
			// cookie stays and the request is refused with 503, rather
			// than served as anonymous and the user signed out.
			s.handle(func(http.ResponseWriter, *http.Request) error {
				return hoard.WrapError(hoard.EUNAVAILABLE, err, "Could not check your sign-in just now. Try again in a moment.")
			})(w, r)
			return
		}
		if time.Since(sess.LastSeenAt) > touchEvery {
			if err := s.deps.DB.TouchSession(r.Context(), sess.ID, time.Now().Add(sessionTTL)); err != nil {
				s.deps.Logger.Warn("touch session", "err", err)
			}
			s.sessions.drop(id)
		}
		if writes {
			s.sessions.beginWrite()
			defer s.sessions.endWrite()
		}
		ctx := context.WithValue(context.WithValue(r.Context(), userKey, user), sessionKey, sess)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// findSession returns the live session id and its user: from memory for a
// request that only reads (sessionCache), from the database for one that
// may change something, so that it acts on what the database says now.
func (s *Server) findSession(r *http.Request, id string, writes bool) (*hoard.Session, *hoard.User, error) {
	if writes {
		return s.deps.DB.FindSessionUser(r.Context(), id)
	}
	return s.sessions.find(r.Context(), id, func(ctx context.Context) (*hoard.Session, *hoard.User, error) {
		return s.deps.DB.FindSessionUser(ctx, id)
	})
}

// safeMethod reports whether method only reads (RFC 9110 section 9.2.1).
func safeMethod(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// startSession signs a user in: a new session id (never one the browser
// brought along), an HttpOnly, SameSite=Lax cookie, Secure over https.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, user *hoard.User) error {
	if old := sessionFrom(r.Context()); old != nil {
		_ = s.deps.DB.DeleteSession(r.Context(), old.ID)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return err
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	sess := &hoard.Session{ID: sessionID(token), UserID: user.ID, ExpiresAt: time.Now().Add(sessionTTL),
		UserAgent: truncate(r.UserAgent(), 256), RemoteAddr: clientIP(r)}
	if err := s.deps.DB.CreateSession(r.Context(), sess); err != nil {
		return err
	}
	if err := s.deps.DB.RecordLogin(r.Context(), user.ID); err != nil {
		s.deps.Logger.Warn("record login", "err", err)
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: token, Path: "/", Expires: sess.ExpiresAt,
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
	return nil
}

func (s *Server) clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
}

// authorize enforces a route's access level. Anonymous page requests are
// sent to the sign-in page; API requests get 401. Signed-in users without
// the role get 403.
func (s *Server) authorize(access Access, h handlerFunc) http.HandlerFunc {
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		if access == Public {
			return h(w, r)
		}
		user := userFrom(r.Context())
		if user == nil {
			if wantsJSON(r) || r.Method != http.MethodGet {
				return hoard.Errorf(hoard.EUNAUTHORIZED, "Sign in first.")
			}
			if next := localPath(r.URL.RequestURI()); next != "/" {
				return redirect(w, r, "/login?next="+url.QueryEscape(next))
			}
			return redirect(w, r, "/login")
		}
		switch access {
		case Admin:
			if !user.IsAdmin() {
				return hoard.Errorf(hoard.EFORBIDDEN, "Only administrators may do this.")
			}
		case Curator:
			if !user.IsAdmin() && !s.deps.UsersCanCurate {
				return hoard.Errorf(hoard.EFORBIDDEN, "Only administrators may edit the catalog.")
			}
		}
		return h(w, r)
	})
}

// clientIP is the peer address of the request (proxies are not trusted).
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// maxLocalPathLen bounds a redirect target: a "next" or "back" parameter is
// at most 2048 characters (paramLimits), which the sign-in redirect's own
// escaping may triple.
const maxLocalPathLen = 8192

// localPath returns next as the local path a redirect actually sends, or
// "/" when next might lead anywhere else. It checks what the browser will
// receive, not what was asked for: http.Redirect cleans the path it sends
// ("/x/../\evil" would become "/\evil", which browsers read as
// "//evil"), so the path is cleaned here first and the result checked. A
// target must be a path (no scheme, host or user) that starts with one
// slash, holds no backslash (raw or encoded), no whitespace or control
// character (browsers drop tabs and newlines from URLs) and no invalid
// UTF-8, decodes to no "//" prefix, and is at most maxLocalPathLen bytes.
func localPath(next string) string {
	if next == "" || len(next) > maxLocalPathLen || !utf8.ValidString(next) || strings.ContainsFunc(next, unsafeInPath) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		!strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") || strings.ContainsFunc(u.Path, unsafeInPath) {
		return "/"
	}
	// The same cleaning http.Redirect applies: the escaped path up to the
	// query, trailing slash kept.
	p := path.Clean(u.EscapedPath())
	if strings.HasSuffix(u.EscapedPath(), "/") && p != "/" {
		p += "/"
	}
	if clean, err := url.PathUnescape(p); err != nil || strings.HasPrefix(clean, "//") || strings.ContainsFunc(clean, unsafeInPath) {
		return "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	if u.Fragment != "" {
		p += "#" + u.EscapedFragment()
	}
	if len(p) < 2 {
		return p
	}
	if p[0] != '/' || p[1] == '/' || p[1] == '\\' {
		return "/"
	}
	return p
}

// unsafeInPath reports characters a local redirect target must not hold:
// backslashes (read as slashes by browsers), whitespace and control
// characters (dropped from URLs by browsers, which can join "/" and "/").
func unsafeInPath(c rune) bool {
	return c == '\\' || unicode.IsSpace(c) || unicode.IsControl(c) || c == utf8.RuneError
}
