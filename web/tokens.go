package web

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// App tokens let programs use the read-only API as their user: a request
// with `Authorization: Bearer <secret>` acts as the token's user on the
// routes of the table marked Tokens, which are GET routes and never Admin
// ones (TestTokenRoutes), whatever the user's role: a token that leaks can
// read what its user reads, and change nothing. Where a route does not take
// tokens, a request that brings one is refused with 403 when the route
// needs a sign-in (a bearer never falls back to the cookie, so a program
// learns at once that it asked for too much) and ignored on public routes.
//
// A token is looked up on every request (by its hash; store.FindAppTokenUser)
// and nothing of it is cached, so a revoked token stops working at once.
// A secret of no live token is a failed sign-in: it counts against the
// address's sign-in throttle (addressThrottleKey, shared with passwords and
// providers) and answers 401; a locked address is refused (429) before its
// token is looked up, so that nothing can be learnt from it while locked.
// Secrets are never logged.

// tokenTouchEvery is how often a token's last use is written at most.
const tokenTouchEvery = time.Minute

// errBadToken refuses a secret of no live token.
var errBadToken = hoard.Errorf(hoard.EUNAUTHORIZED, "The app token is not valid: it is unknown, revoked, or its user was removed.")

// errTokenNotAccepted refuses a token on a route that does not take tokens.
var errTokenNotAccepted = hoard.Errorf(hoard.EFORBIDDEN,
	"App tokens are read-only: they are accepted on the API's GET routes that are not for administrators only (see /api/openapi.json). Sign in for the rest.")

// Challenges of the WWW-Authenticate header (RFC 6750).
const (
	bearerChallenge       = `Bearer realm="hoard"`
	bearerInvalidToken    = `Bearer realm="hoard", error="invalid_token"`
	bearerInsufficientUse = `Bearer realm="hoard", error="insufficient_scope"`
)

// bearerSecret returns the secret of the request's `Authorization: Bearer`
// header, and whether it has one (an empty secret is still a bearer).
func bearerSecret(r *http.Request) (string, bool) {
	scheme, secret, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(secret), true
}

// tokenUser authenticates the request by its `Authorization: Bearer`
// header: ok is false when it has none; otherwise the token's user, or the
// error userFromToken gives.
func (s *Server) tokenUser(r *http.Request) (*hoard.User, bool, error) {
	secret, ok := bearerSecret(r)
	if !ok {
		return nil, false, nil
	}
	u, err := s.userFromToken(r, secret)
	return u, true, err
}

// userFromToken returns the user of the live app token whose secret this
// is, for any way a client may present it (a bearer header, Basic auth's
// password). It does not decide what the user may do: callers allow only
// reading. Errors: ERATELIMITED while r's address is locked by the sign-in
// throttle; EUNAUTHORIZED (errBadToken) for a secret of no live token, which
// counts as a failed sign-in from the address; others are the database's.
// The user returned is a copy with the role USER, whatever the stored role:
// a token never carries an administrator's rights, neither on routes nor in
// handlers that look at the role. The token's last use is recorded at most
// every tokenTouchEvery.
func (s *Server) userFromToken(r *http.Request, secret string) (*hoard.User, error) {
	ctx := r.Context()
	keys := []store.ThrottleKey{addressThrottleKey(r)}
	t, err := s.deps.DB.FindThrottleLock(ctx, keys)
	if err != nil {
		return nil, err
	}
	if !t.Allowed {
		return nil, errTooManySignIns(t.RetryAt)
	}
	tok, user, err := s.deps.DB.FindAppTokenUser(ctx, secret)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		t, err := s.deps.DB.ReserveLoginAttempt(ctx, keys, throttleWindow, throttleLock)
		if err != nil {
			return nil, err
		}
		if !t.Allowed {
			return nil, errTooManySignIns(t.RetryAt)
		}
		s.deps.Logger.Info("app token refused", "remote", clientIP(r), "path", r.URL.Path)
		return nil, errBadToken
	} else if err != nil {
		return nil, err
	}
	if tok.LastUsedAt == nil || time.Since(*tok.LastUsedAt) >= tokenTouchEvery {
		if err := s.deps.DB.TouchAppToken(ctx, tok.ID); err != nil {
			s.deps.Logger.Warn("touch app token", "token", tok.ID, "err", err)
		}
	}
	user.Role = hoard.RoleUser
	return user, nil
}

// withTokenUser returns ctx acting as user, authenticated by an app token:
// no session (a cookie the request also brought is not used).
func withTokenUser(ctx context.Context, user *hoard.User) context.Context {
	return context.WithValue(context.WithValue(ctx, userKey, user), sessionKey, (*hoard.Session)(nil))
}

// acceptTokens puts app-token authentication in front of a route's
// handler (next: the route's authorize): see the comment at the top of this
// file for what a route with and without Tokens does with a bearer.
func (s *Server) acceptTokens(rt route, next http.Handler) http.HandlerFunc {
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		if _, ok := bearerSecret(r); !ok {
			if rt.Tokens && rt.Access != Public && userFrom(r.Context()) == nil {
				w.Header().Set("WWW-Authenticate", bearerChallenge)
			}
			next.ServeHTTP(w, r)
			return nil
		}
		readOnly := r.Method == http.MethodGet || r.Method == http.MethodHead
		switch {
		case rt.Tokens && readOnly && rt.Access != Admin:
		case rt.Access == Public && !rt.Tokens:
			next.ServeHTTP(w, r)
			return nil
		default:
			w.Header().Set("WWW-Authenticate", bearerInsufficientUse)
			return errTokenNotAccepted
		}
		user, _, err := s.tokenUser(r)
		if err != nil {
			if hoard.ErrorCode(err) == hoard.EUNAUTHORIZED {
				w.Header().Set("WWW-Authenticate", bearerInvalidToken)
			}
			return err
		}
		next.ServeHTTP(w, r.WithContext(withTokenUser(r.Context(), user)))
		return nil
	})
}

// The settings page's app tokens.

// tokenParams are the parameters of POST /settings/tokens.
type tokenParams struct {
	Name string `form:"name" validate:"required,max=64"`
}

// tokensCard is the settings page's App tokens section.
type tokensCard struct {
	Tokens  []hoard.AppToken
	Max     int
	MaxName int
	// New is the token just made and Secret its secret, shown on this one
	// page only.
	New    *hoard.AppToken
	Secret string
}

// handleCreateToken makes an app token and shows Settings with its secret,
// once; the response is not stored (no-store) and the secret is nowhere
// else. A JSON request gets 201 with the secret.
func (s *Server) handleCreateToken(w http.ResponseWriter, r *http.Request) error {
	me := userFrom(r.Context())
	tok, secret, err := s.deps.DB.CreateAppToken(r.Context(), me.ID, paramsOf[tokenParams](r).Name)
	if err != nil {
		return aboutField("name", err)
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusCreated, map[string]any{"id": tok.ID, "name": tok.Name, "prefix": tok.Prefix,
			"created_at": tok.CreatedAt.UTC().Format(time.RFC3339), "token": secret})
		return nil
	}
	p, err := s.settingsPage(r, linkCard{})
	if err != nil {
		return err
	}
	d := p.Data.(settingsData)
	d.Tokens.New, d.Tokens.Secret = tok, secret
	p.Data = d
	p.Notice = "App token “" + tok.Name + "” created: copy it now, it is not shown again."
	return s.renderWithProviders(w, r, http.StatusOK, "settings", p)
}

// handleRevokeToken revokes one of the caller's app tokens (an
// administrator may revoke anyone's); it stops working at once.
func (s *Server) handleRevokeToken(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	me := userFrom(r.Context())
	owner := me.ID
	if me.IsAdmin() {
		owner = 0
	}
	if err := s.deps.DB.RevokeAppToken(r.Context(), id, owner); err != nil {
		return notFoundAs(err, "No such app token.")
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "revoked": true})
		return nil
	}
	return redirect(w, r, "/settings?done=token-revoked#tokens")
}
