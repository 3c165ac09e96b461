package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"golang.org/x/oauth2"
)

// Sign-in with an identity provider: the flows. A sign-in (or a link from
// Settings) starts with a POST that stores the flow server-side
// (store.SignInFlow: PKCE verifier, nonce, where to go next, the invite
// code, the user a link is for) under the SHA-256 of a random state, puts
// the state into a short-lived HttpOnly cookie and sends the browser to the
// provider. The callback takes the flow once, only in the browser whose
// cookie holds the state, so a state can be neither replayed nor planted in
// another browser; nothing but the state and the provider's code travels
// through the provider. Who may get in follows the catalog's invite-only
// rules (finishSignIn).

// flowTTL is how long a sign-in may stay at the provider.
const flowTTL = 10 * time.Minute

// flowCookieName is the cookie holding a flow's state (hostCookieName).
func (s *Server) flowCookieName() string { return s.hostCookieName("hoard_sign_in") }

// flowID is what a flow is stored under: the SHA-256 of its state.
func flowID(state string) string {
	sum := sha256.Sum256([]byte(state))
	return hex.EncodeToString(sum[:])
}

// randomToken returns n random bytes, base64url-encoded (crypto/rand never
// fails).
func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// providerButton is a provider as the sign-in, registration and settings
// pages offer it.
type providerButton struct {
	Key  string
	Name string
}

// providerButtons lists the configured providers, in button order.
func (s *Server) providerButtons() []providerButton {
	out := make([]providerButton, len(s.providers))
	for i, p := range s.providers {
		out[i] = providerButton{Key: p.Key(), Name: p.Name()}
	}
	return out
}

// provider returns the configured provider the path names, or ENOTFOUND.
func (s *Server) provider(r *http.Request) (identityProvider, error) {
	key := chi.URLParam(r, "provider")
	for _, p := range s.providers {
		if p.Key() == key {
			return p, nil
		}
	}
	return nil, hoard.Errorf(hoard.ENOTFOUND, "No such sign-in provider.")
}

// providerStartParams are the parameters of POST /auth/{provider}/login.
type providerStartParams struct {
	Next string `form:"next" validate:"max=2048"`
	Code string `form:"code" validate:"max=64"`
}

// handleProviderSignIn starts a sign-in through a provider; with an invite
// code (the registration page's), a first sign-in may create an account.
// A code that cannot register anyone is refused here, before the trip to
// the provider.
func (s *Server) handleProviderSignIn(w http.ResponseWriter, r *http.Request) error {
	p, err := s.provider(r)
	if err != nil {
		return err
	}
	in := paramsOf[providerStartParams](r)
	if in.Code != "" {
		if err := s.checkProviderInvite(r.Context(), in.Code); err != nil {
			if statusFor(err) >= 500 {
				return err
			}
			return s.renderWithProviders(w, r, statusFor(err), "register", page{Title: "Register", Error: hoard.ErrorMessage(err),
				Data: registerForm{Code: in.Code, Providers: s.providerButtons()}})
		}
	}
	return s.startFlow(w, r, p, store.SignInFlow{NextPath: localPath(in.Next), InviteCode: in.Code})
}

// checkProviderInvite refuses an invite code that cannot register anyone
// through a provider: unknown, expired, used up, or one that makes an
// administrator (only a password registration may use that).
func (s *Server) checkProviderInvite(ctx context.Context, code string) error {
	inv, err := s.deps.DB.FindInviteByCode(ctx, code)
	if err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return err
	}
	return store.IdentityInviteRefusal(inv, time.Now())
}

// linkProviderParams are the parameters of POST
// /settings/sign-in/{provider}/link.
type linkProviderParams struct {
	Current string `form:"current,raw" validate:"max=256"`
}

// handleLinkProvider starts linking an account of a provider to the signed-in
// user. With the current password (checked and throttled like a sign-in)
// any account of the provider may be linked; without it, only one whose
// e-mail the provider has verified and which is the user's own.
func (s *Server) handleLinkProvider(w http.ResponseWriter, r *http.Request) error {
	p, err := s.provider(r)
	if err != nil {
		return err
	}
	me := userFrom(r.Context())
	confirmed := false
	if current := paramsOf[linkProviderParams](r).Current; current != "" {
		hash := me.PasswordHash
		if !me.HasPassword() {
			hash = dummyHash()
		}
		ok, err := s.checkPasswordThrottled(r, me.Email, hash, current)
		switch {
		case hoard.ErrorCode(err) == hoard.ERATELIMITED:
			return s.settingsFailed(w, r, err)
		case err != nil:
			return err
		case !ok || !me.HasPassword():
			return s.settingsFailed(w, r, hoard.Errorf(hoard.EUNAUTHORIZED, "The password is wrong."))
		}
		confirmed = true
	}
	return s.startFlow(w, r, p, store.SignInFlow{NextPath: "/settings", LinkUserID: me.ID, PasswordConfirmed: confirmed})
}

// startFlow stores a flow with fresh secrets and sends the browser to the
// provider. Every start counts as a sign-in attempt from the address
// (throttled like passwords); a flow that signs someone in gives it back.
func (s *Server) startFlow(w http.ResponseWriter, r *http.Request, p identityProvider, f store.SignInFlow) error {
	ctx := r.Context()
	t, err := s.deps.DB.ReserveLoginAttempt(ctx, providerThrottleKeys(r), throttleWindow, throttleLock)
	if err != nil {
		return err
	}
	if !t.Allowed {
		return s.providerFailed(w, r, errTooManySignIns(t.RetryAt))
	}
	state, nonce, verifier := randomToken(32), randomToken(24), oauth2.GenerateVerifier()
	target, err := p.authCodeURL(ctx, state, nonce, verifier)
	if err != nil {
		return s.providerFailed(w, r, err)
	}
	f.ID, f.Provider, f.Nonce, f.Verifier, f.ExpiresAt = flowID(state), p.Key(), nonce, verifier, time.Now().Add(flowTTL)
	if err := s.deps.DB.CreateSignInFlow(ctx, &f); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: s.flowCookieName(), Value: state, Path: "/", MaxAge: int(flowTTL / time.Second),
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, target, http.StatusSeeOther)
	return nil
}

// providerThrottleKeys are the counters a provider sign-in goes against:
// its address's, shared with password sign-ins (the account is not known
// before the provider answers).
func providerThrottleKeys(r *http.Request) []store.ThrottleKey {
	return []store.ThrottleKey{addressThrottleKey(r)}
}

// callbackParams are what a provider sends the browser back with.
type callbackParams struct {
	State            string `form:"state,raw" validate:"max=128"`
	Code             string `form:"code,raw" validate:"max=4096"`
	Error            string `form:"error" validate:"max=200"`
	ErrorDescription string `form:"error_description" validate:"max=1000"`
}

// errFlowLost refuses a callback whose flow is unknown, used, expired,
// another provider's or started in another browser.
var errFlowLost = hoard.Errorf(hoard.EUNAUTHORIZED,
	"This sign-in has expired, was used already or was started in another browser: start again.")

// handleProviderCallback finishes a flow: the provider sends the browser
// here with the state and a code (the redirect URL to register at the
// provider is APP_URL/auth/{provider}/callback).
func (s *Server) handleProviderCallback(w http.ResponseWriter, r *http.Request) error {
	p, err := s.provider(r)
	if err != nil {
		return err
	}
	in := paramsOf[callbackParams](r)
	flow, err := s.takeFlow(w, r, p, in.State)
	if err != nil {
		return s.providerFailed(w, r, err)
	}
	if in.Error != "" {
		reason := in.Error
		if in.ErrorDescription != "" {
			reason += ": " + in.ErrorDescription
		}
		return s.providerFailed(w, r, hoard.Errorf(hoard.EUNAUTHORIZED, "%s did not sign you in (%s).", p.Name(), reason))
	}
	acct, err := p.identify(r.Context(), in.Code, flow.Verifier, flow.Nonce)
	if err != nil {
		return s.providerFailed(w, r, err)
	}
	if flow.LinkUserID != 0 {
		return s.finishLink(w, r, p, flow, acct)
	}
	return s.finishSignIn(w, r, p, flow, acct)
}

// takeFlow returns the flow of state, which this browser's cookie must hold,
// and forgets both: a flow is finished once.
func (s *Server) takeFlow(w http.ResponseWriter, r *http.Request, p identityProvider, state string) (*store.SignInFlow, error) {
	c, cookieErr := r.Cookie(s.flowCookieName())
	http.SetCookie(w, &http.Cookie{Name: s.flowCookieName(), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
	if state == "" || cookieErr != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(state)) != 1 {
		return nil, errFlowLost
	}
	flow, err := s.deps.DB.TakeSignInFlow(r.Context(), flowID(state))
	switch {
	case hoard.ErrorCode(err) == hoard.ENOTFOUND:
		return nil, errFlowLost
	case err != nil:
		return nil, err
	case flow.Provider != p.Key():
		return nil, errFlowLost
	}
	return flow, nil
}

// finishSignIn signs in the user a provider account is linked to, or makes
// an account for a person the provider vouches for (signUp).
func (s *Server) finishSignIn(w http.ResponseWriter, r *http.Request, p identityProvider, flow *store.SignInFlow, acct providerAccount) error {
	ctx := r.Context()
	user, link, err := s.deps.DB.FindUserByIdentity(ctx, acct.Issuer, acct.Subject)
	switch {
	case err == nil:
		if err := s.deps.DB.RecordIdentityUse(ctx, link.ID, acct.Email); err != nil {
			return err
		}
		if user, err = s.applyProviderRole(ctx, p, user, acct); err != nil {
			return err
		}
	case hoard.ErrorCode(err) == hoard.ENOTFOUND:
		if user, err = s.signUp(ctx, p, flow, acct); err != nil {
			return s.providerFailed(w, r, err)
		}
	default:
		return err
	}
	if err := s.startSession(w, r, user); err != nil {
		return err
	}
	s.refundProviderAttempt(r)
	return redirect(w, r, flow.NextPath)
}

// signUp makes an account for a person a provider account is not linked to
// yet. The rules that keep the catalog invite-only hold: the provider must
// vouch for the e-mail address (verified), no account may have it already
// (that person signs in with the password and links the provider in
// Settings), and the flow must carry a valid invite code unless the
// address is in an allowed domain. The account is a USER unless the
// configured claim mapping says ADMIN.
func (s *Server) signUp(ctx context.Context, p identityProvider, flow *store.SignInFlow, acct providerAccount) (*hoard.User, error) {
	switch {
	case acct.Email == "":
		return nil, hoard.Errorf(hoard.EFORBIDDEN, "%s did not tell hoard your e-mail address, which a new account needs.", p.Name())
	case !acct.EmailVerified:
		return nil, hoard.Errorf(hoard.EFORBIDDEN, "%s has not verified your e-mail address %s: verify it there, then sign in again.", p.Name(), acct.Email)
	case checkEmail(acct.Email) != nil:
		return nil, hoard.Errorf(hoard.EFORBIDDEN, "The e-mail address %s is not one hoard can use.", acct.Email)
	}
	if _, err := s.deps.DB.FindUserByEmail(ctx, acct.Email); err == nil {
		return nil, hoard.Errorf(hoard.ECONFLICT, "An account with the e-mail address %s exists already: sign in with its password, then link %s in Settings.", acct.Email, p.Name())
	} else if hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return nil, err
	}
	nu := store.IdentityUser{Email: acct.Email, Role: hoard.RoleUser, InviteCode: flow.InviteCode,
		Identity: hoard.Identity{Provider: p.Key(), Issuer: acct.Issuer, Subject: acct.Subject, Email: acct.Email}}
	if acct.Role == hoard.RoleAdmin {
		nu.Role = hoard.RoleAdmin
	}
	if s.emailDomainAllowed(acct.Email) {
		nu.InviteCode = "" // no invite needed: keep it for someone else
	} else if nu.InviteCode == "" {
		return nil, hoard.Errorf(hoard.EFORBIDDEN, "hoard is invite-only: open the invite link an administrator gave you and choose %s there.", p.Name())
	}
	user, err := s.deps.DB.RegisterWithIdentity(ctx, nu)
	if err != nil {
		return nil, err
	}
	s.deps.Logger.Info("user registered through a provider", "user", user.ID, "role", user.Role, "provider", p.Key(), "invite", nu.InviteCode != "")
	return user, nil
}

// emailDomainAllowed reports whether the address's domain is on the
// allow-list of SignInConfig.EmailDomains.
func (s *Server) emailDomainAllowed(email string) bool {
	at := strings.LastIndexByte(email, '@')
	if at < 0 {
		return false
	}
	domain := strings.ToLower(email[at+1:])
	return slices.ContainsFunc(s.deps.SignIn.EmailDomains, func(d string) bool {
		return strings.ToLower(strings.TrimPrefix(d, "@")) == domain
	})
}

// applyProviderRole gives a user signing in through a provider the role its
// claims map to, when a mapping is configured; the last administrator
// keeps the role (store.SetRoleFromProvider).
func (s *Server) applyProviderRole(ctx context.Context, p identityProvider, user *hoard.User, acct providerAccount) (*hoard.User, error) {
	if acct.Role == "" || acct.Role == user.Role {
		return user, nil
	}
	role, err := s.deps.DB.SetRoleFromProvider(ctx, user.ID, acct.Role)
	if err != nil {
		return nil, err
	}
	if role != acct.Role {
		s.deps.Logger.Warn("the provider's claims would demote the last administrator; the role is kept", "user", user.ID, "provider", p.Key())
	} else {
		s.deps.Logger.Info("role set from the provider's claims", "user", user.ID, "role", role, "provider", p.Key())
	}
	u := *user
	u.Role = role
	return &u, nil
}

// finishLink links the provider account to the user who started the link,
// who must still be the one signed in here.
func (s *Server) finishLink(w http.ResponseWriter, r *http.Request, p identityProvider, flow *store.SignInFlow, acct providerAccount) error {
	me := userFrom(r.Context())
	if me == nil || me.ID != flow.LinkUserID {
		return s.providerFailed(w, r, errFlowLost)
	}
	ownEmail := acct.EmailVerified && strings.EqualFold(acct.Email, me.Email)
	if !flow.PasswordConfirmed && !ownEmail {
		return s.providerFailed(w, r, hoard.Errorf(hoard.EFORBIDDEN,
			"%s does not vouch for your e-mail address %s on that account: type your password to link it anyway.", p.Name(), me.Email))
	}
	_, err := s.deps.DB.LinkIdentity(r.Context(), me.ID, hoard.Identity{Provider: p.Key(), Issuer: acct.Issuer,
		Subject: acct.Subject, Email: acct.Email})
	if err != nil {
		return s.providerFailed(w, r, err)
	}
	s.refundProviderAttempt(r)
	s.deps.Logger.Info("provider account linked", "user", me.ID, "provider", p.Key(), "password_confirmed", flow.PasswordConfirmed)
	return redirect(w, r, "/settings?done=provider-linked#sign-in")
}

// handleUnlinkProvider unlinks the signed-in user's account of a provider
// (configured or not any more), unless it is their last way to sign in.
func (s *Server) handleUnlinkProvider(w http.ResponseWriter, r *http.Request) error {
	me := userFrom(r.Context())
	if err := s.deps.DB.UnlinkIdentity(r.Context(), me.ID, chi.URLParam(r, "provider")); err != nil {
		return s.settingsFailed(w, r, err)
	}
	return redirect(w, r, "/settings?done=provider-unlinked#sign-in")
}

// refundProviderAttempt gives back the attempt a finished flow reserved.
func (s *Server) refundProviderAttempt(r *http.Request) {
	if err := s.deps.DB.RefundLoginAttempt(r.Context(), providerThrottleKeys(r)); err != nil {
		s.deps.Logger.Warn("refund sign-in attempt", "err", err)
	}
}

// providerFailed shows why a sign-in (or link) through a provider did not
// work: on Settings for a signed-in user, else on the sign-in page, with
// the error's status. Errors of hoard itself (5xx other than an unreachable
// provider) go to the error page.
func (s *Server) providerFailed(w http.ResponseWriter, r *http.Request, err error) error {
	status := statusFor(err)
	if status >= 500 && hoard.ErrorCode(err) != codeProviderDown {
		return err
	}
	if status >= 500 {
		s.deps.Logger.Warn("sign-in through a provider failed", "path", r.URL.Path, "status", status, "err", err)
	} else {
		s.deps.Logger.Info("sign-in through a provider refused", "path", r.URL.Path, "status", status, "err", err)
	}
	if userFrom(r.Context()) != nil {
		return s.settingsFailed(w, r, err)
	}
	return s.renderWithProviders(w, r, status, "login", page{Title: "Sign in", Error: hoard.ErrorMessage(err),
		Data: loginForm{Next: "/", Providers: s.providerButtons()}})
}

// settingsFailed shows Settings with an error and its status (5xx errors
// go to the error page).
func (s *Server) settingsFailed(w http.ResponseWriter, r *http.Request, err error) error {
	status := statusFor(err)
	if status >= 500 && hoard.ErrorCode(err) != codeProviderDown {
		return err
	}
	p, perr := s.settingsPage(r, linkCard{})
	if perr != nil {
		return perr
	}
	// The message goes beside the field it is about (forms.go), else at
	// the top of the page; passwords are never sent back.
	p.Form = formState{Action: r.URL.Path, Field: fieldOf(err), Message: hoard.ErrorMessage(err), shown: new(bool)}
	return s.renderWithProviders(w, r, status, "settings", p)
}

// renderWithProviders renders a page that posts to the providers' sign-in
// routes: browsers apply the page's form-action policy to the redirect to
// the provider too, so the policy names the providers' origins.
func (s *Server) renderWithProviders(w http.ResponseWriter, r *http.Request, status int, name string, p page) error {
	if origins := s.providerOrigins(); len(origins) > 0 {
		w.Header().Set("Content-Security-Policy",
			strings.Replace(contentSecurityPolicy, "form-action 'self'", "form-action 'self' "+strings.Join(origins, " "), 1))
	}
	return s.render(w, r, status, name, p)
}

// providerOrigins are the origins of the providers' authorization pages.
func (s *Server) providerOrigins() []string {
	var out []string
	for _, p := range s.providers {
		for _, raw := range p.authURLs() {
			if u, err := url.Parse(raw); err == nil && u.Host != "" && !slices.Contains(out, u.Scheme+"://"+u.Host) {
				out = append(out, u.Scheme+"://"+u.Host)
			}
		}
	}
	return out
}

// signInCard is Settings' section about the ways to sign in: the password
// and an entry per provider (configured ones, and any other the user has
// an account of linked).
type signInCard struct {
	HasPassword bool
	Methods     []signInMethod
	// CanUnlink is false when unlinking would leave no way to sign in.
	CanUnlink bool
}

// signInMethod is a provider on Settings.
type signInMethod struct {
	providerButton
	Configured bool
	Linked     *hoard.Identity
}

// signInCard builds Settings' sign-in section for user.
func (s *Server) signInCard(ctx context.Context, user *hoard.User) (signInCard, error) {
	ids, err := s.deps.DB.ListIdentities(ctx, user.ID)
	if err != nil {
		return signInCard{}, err
	}
	card := signInCard{HasPassword: user.HasPassword(), CanUnlink: user.HasPassword() || len(ids) > 1}
	for _, b := range s.providerButtons() {
		card.Methods = append(card.Methods, signInMethod{providerButton: b, Configured: true})
	}
	for _, id := range ids {
		i := slices.IndexFunc(card.Methods, func(m signInMethod) bool { return m.Key == id.Provider })
		if i < 0 {
			card.Methods = append(card.Methods, signInMethod{providerButton: providerButton{Key: id.Provider, Name: id.Provider}})
			i = len(card.Methods) - 1
		}
		card.Methods[i].Linked = &id
	}
	return card, nil
}
