package web

import (
	"errors"
	"net/http"
	"net/mail"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// Sign-in throttling. Every attempt is counted before its password is
// checked (store.ReserveLoginAttempt), against its address and against the
// account it names from that address: past the maximum within the window,
// that key is locked for a while. Counting per account-and-address, not per
// account, means that whoever knows an email cannot lock its owner out: the
// owner's own address has its own count. A successful sign-in gives its
// attempt back.
const (
	throttleWindow     = 15 * time.Minute
	throttleLock       = 15 * time.Minute
	maxFailuresAccount = 5  // per account and address
	maxFailuresAddress = 20 // per address, whatever the account
)

// throttleKeys are the counters a sign-in attempt for email from r's
// address goes against.
func throttleKeys(r *http.Request, email string) []store.ThrottleKey {
	return []store.ThrottleKey{
		{Key: "account:" + strings.ToLower(email) + " from " + clientIP(r), Max: maxFailuresAccount},
		addressThrottleKey(r),
	}
}

// addressThrottleKey is the counter of every sign-in attempt from r's
// address, whatever the account or the way in.
func addressThrottleKey(r *http.Request) store.ThrottleKey {
	return store.ThrottleKey{Key: "ip:" + clientIP(r), Max: maxFailuresAddress}
}

// errTooManySignIns refuses an attempt past the throttle's limit.
func errTooManySignIns(retryAt time.Time) error {
	wait := max(time.Until(retryAt).Round(time.Minute), time.Minute)
	return hoard.Errorf(hoard.ERATELIMITED, "Too many failed sign-ins. Try again in %s.", strings.TrimSuffix(wait.String(), "0s"))
}

// checkPasswordThrottled checks password against hash as an attempt to
// sign in as email from r's address: the attempt is counted first, refused
// (ERATELIMITED) past the limit, and given back when the password is right.
// Every check that reaches the password is counted on the server
// (passwordChecks).
func (s *Server) checkPasswordThrottled(r *http.Request, email, hash, password string) (bool, error) {
	ctx := r.Context()
	keys := throttleKeys(r, email)
	t, err := s.deps.DB.ReserveLoginAttempt(ctx, keys, throttleWindow, throttleLock)
	if err != nil {
		return false, err
	}
	if !t.Allowed {
		return false, errTooManySignIns(t.RetryAt)
	}
	s.passwordChecks.Add(1)
	ok, err := verifyPassword(ctx, hash, password)
	if err != nil && !errors.Is(err, errBadHash) {
		return false, err // the request ended while it waited for a hash slot
	} else if err != nil && hash != dummyHash() {
		s.deps.Logger.Error("stored password hash is unreadable", "err", err)
	}
	if !ok {
		return false, nil
	}
	// Give the attempt back and forget the account's earlier failures from
	// this address.
	if err := s.deps.DB.RefundLoginAttempt(ctx, keys); err != nil {
		s.deps.Logger.Warn("refund sign-in attempt", "err", err)
	}
	if err := s.deps.DB.ClearThrottle(ctx, keys[0].Key); err != nil {
		s.deps.Logger.Warn("clear sign-in throttle", "err", err)
	}
	return true, nil
}

type loginForm struct {
	Email     string
	Next      string
	Providers []providerButton
}

// loginParams are the parameters of the sign-in form and its page.
type loginParams struct {
	Email    string `form:"email" validate:"max=320"`
	Password string `form:"password,raw" validate:"max=256"`
	Next     string `form:"next" validate:"max=2048"`
}

func (s *Server) handleLoginForm(w http.ResponseWriter, r *http.Request) error {
	next := localPath(paramsOf[loginParams](r).Next)
	if userFrom(r.Context()) != nil {
		return redirect(w, r, next)
	}
	return s.renderWithProviders(w, r, http.StatusOK, "login", page{Title: "Sign in", Data: loginForm{Next: next, Providers: s.providerButtons()}})
}

// handleLogin signs a user in with email and password (form contract:
// POST /login email, password → 303, or the form again with 4xx).
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	in := paramsOf[loginParams](r)
	email, password := in.Email, in.Password
	form := loginForm{Email: email, Next: localPath(in.Next), Providers: s.providerButtons()}
	fail := func(status int, msg string) error {
		return s.renderWithProviders(w, r, status, "login", page{Title: "Sign in", Error: msg, Data: form})
	}
	if email == "" || password == "" {
		return fail(http.StatusUnprocessableEntity, "Enter your email and password.")
	}
	// An unknown account, or one without a password (signed up through a
	// provider), is checked against dummyHash: as slow, never right.
	user, err := s.deps.DB.FindUserByEmail(ctx, email)
	hash := dummyHash()
	if err == nil && user.HasPassword() {
		hash = user.PasswordHash
	} else if err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return err
	}
	ok, err := s.checkPasswordThrottled(r, email, hash, password)
	if hoard.ErrorCode(err) == hoard.ERATELIMITED {
		return fail(http.StatusTooManyRequests, hoard.ErrorMessage(err))
	} else if err != nil {
		return err
	}
	if user == nil || !user.HasPassword() || !ok {
		return fail(http.StatusUnauthorized, "Wrong email or password.")
	}
	if err := s.startSession(w, r, user); err != nil {
		return err
	}
	return redirect(w, r, form.Next)
}

type registerForm struct {
	Code      string
	Email     string
	Providers []providerButton
}

// registerParams are the parameters of the registration form and its page
// (?code= pre-fills the invite code).
type registerParams struct {
	Code     string `form:"code"`
	Email    string `form:"email" validate:"max=320"`
	Password string `form:"password,raw" validate:"max=256"`
	// Confirm is the password typed again; the form asks for it, a client
	// that sends none is not checked.
	Confirm string `form:"confirm,raw" validate:"max=256"`
}

func (s *Server) handleRegisterForm(w http.ResponseWriter, r *http.Request) error {
	return s.renderWithProviders(w, r, http.StatusOK, "register", page{Title: "Register",
		Data: registerForm{Code: paramsOf[registerParams](r).Code, Providers: s.providerButtons()}})
}

// handleRegister creates an account with an invite code (form contract:
// POST /register code, email, password → 303, or the form again with 4xx).
func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) error {
	in := paramsOf[registerParams](r)
	form := registerForm{Code: in.Code, Email: in.Email, Providers: s.providerButtons()}
	password := in.Password
	fail := func(err error) error {
		if statusFor(err) >= 500 {
			return err
		}
		// The message goes beside its field (forms.go); the page keeps the
		// code and email, never the password.
		return s.renderWithProviders(w, r, statusFor(err), "register", page{Title: "Register", Data: form,
			Form: formState{Action: r.URL.Path, Field: fieldOf(err), Message: hoard.ErrorMessage(err), shown: new(bool)}})
	}
	if form.Code == "" {
		return fail(invalidField("code", "Registration needs an invite code."))
	}
	if err := checkEmail(form.Email); err != nil {
		return fail(aboutField("email", err))
	}
	if err := checkNewPassword(password); err != nil {
		return fail(aboutField("password", err))
	}
	if in.Confirm != "" && in.Confirm != password {
		return fail(invalidField("confirm", "The two passwords differ: type the same password twice."))
	}
	// Refuse a bad code before spending a password hash on it.
	inv, err := s.deps.DB.FindInviteByCode(r.Context(), form.Code)
	if err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return err
	}
	if err := store.InviteRefusal(inv, time.Now()); err != nil {
		return fail(aboutField("code", err))
	}
	hash, err := hashPassword(r.Context(), password)
	if err != nil {
		return err
	}
	user, err := s.deps.DB.RegisterWithInvite(r.Context(), form.Code, form.Email, hash)
	if err != nil {
		return fail(err)
	}
	s.deps.Logger.Info("user registered", "user", user.ID, "role", user.Role)
	if err := s.startSession(w, r, user); err != nil {
		return err
	}
	return redirect(w, r, "/")
}

// checkEmail validates an email address as typed by a user.
func checkEmail(email string) error {
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || len(email) > 320 || !strings.Contains(email[strings.LastIndex(email, "@"):], ".") {
		return hoard.Errorf(hoard.EINVALID, "Enter a valid email address.")
	}
	return nil
}

func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) error {
	if sess := sessionFrom(r.Context()); sess != nil {
		if err := s.deps.DB.DeleteSession(r.Context(), sess.ID); err != nil {
			return err
		}
	}
	s.clearCookie(w)
	return redirect(w, r, "/login")
}

func (s *Server) handleSettings(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsPage(r, linkCard{})
	if err != nil {
		return err
	}
	switch {
	case r.URL.Query().Get("changed") == "1":
		p.Notice = "Password changed."
	case r.URL.Query().Get("done") == "unlinked":
		p.Notice = "Messenger account unlinked."
	case r.URL.Query().Get("done") == "link-first":
		p.Notice = "Link your messenger account first: the bot delivers packages to it."
	case r.URL.Query().Get("done") == "subscribed":
		p.Notice = "Subscribed: the bot tells your linked account about new matching packages."
	case r.URL.Query().Get("done") == "unsubscribed":
		p.Notice = "Subscription removed."
	case r.URL.Query().Get("done") == "provider-linked":
		p.Notice = "Account linked: you can sign in with it now."
	case r.URL.Query().Get("done") == "provider-unlinked":
		p.Notice = "Account unlinked."
	case r.URL.Query().Get("done") == "token-revoked":
		p.Notice = "App token revoked: it no longer works."
	}
	return s.renderWithProviders(w, r, http.StatusOK, "settings", p)
}

// passwordParams are the parameters of POST /settings/password.
type passwordParams struct {
	Current string `form:"current,raw" validate:"max=256"`
	New     string `form:"new,raw" validate:"max=256"`
}

// handleChangePassword checks the current password, stores the new one and
// signs out every other session of the user. A user who signed up through a
// provider and has no password yet sets one without a current one.
func (s *Server) handleChangePassword(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	user := userFrom(ctx)
	in := paramsOf[passwordParams](r)
	if user.HasPassword() {
		ok, err := s.checkPasswordThrottled(r, user.Email, user.PasswordHash, in.Current)
		if hoard.ErrorCode(err) == hoard.ERATELIMITED {
			return s.settingsFailed(w, r, aboutField("current", err))
		} else if err != nil {
			return err
		}
		if !ok {
			return s.settingsFailed(w, r, &fieldError{field: "current", err: hoard.Errorf(hoard.EUNAUTHORIZED, "The current password is wrong.")})
		}
	}
	next := in.New
	if err := checkNewPassword(next); err != nil {
		return s.settingsFailed(w, r, aboutField("new", err))
	}
	hash, err := hashPassword(ctx, next)
	if err != nil {
		return err
	}
	keep := ""
	if sess := sessionFrom(ctx); sess != nil {
		keep = sess.ID
	}
	err = s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		set := tx.SetUserPassword
		if !user.HasPassword() {
			set = tx.SetUserPasswordIfNone
		}
		if err := set(ctx, user.ID, hash); err != nil {
			return err
		}
		return tx.DeleteUserSessions(ctx, user.ID, keep)
	})
	if hoard.ErrorCode(err) == hoard.ECONFLICT {
		return s.settingsFailed(w, r, err)
	}
	if err != nil {
		return err
	}
	return redirect(w, r, "/settings?changed=1")
}
