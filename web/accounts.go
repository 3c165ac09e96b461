package web

import (
	"context"
	"net/http"
	"net/mail"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// Sign-in throttling: failures per address and per account within a window
// lock that key for a while.
const (
	throttleWindow     = 15 * time.Minute
	throttleLock       = 15 * time.Minute
	maxFailuresAccount = 5
	maxFailuresAddress = 20
)

type loginForm struct {
	Email string
	Next  string
}

func (s *Server) handleLoginForm(w http.ResponseWriter, r *http.Request) error {
	if userFrom(r.Context()) != nil {
		return redirect(w, r, localPath(r.URL.Query().Get("next")))
	}
	return s.render(w, r, http.StatusOK, "login", page{Title: "Sign in", Data: loginForm{Next: localPath(r.URL.Query().Get("next"))}})
}

// handleLogin signs a user in with email and password (form contract:
// POST /login email, password → 303, or the form again with 4xx).
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	email := strings.TrimSpace(r.PostFormValue("email"))
	password := r.PostFormValue("password")
	form := loginForm{Email: email, Next: localPath(r.PostFormValue("next"))}
	fail := func(status int, msg string) error {
		return s.render(w, r, status, "login", page{Title: "Sign in", Error: msg, Data: form})
	}
	if email == "" || password == "" {
		return fail(http.StatusUnprocessableEntity, "Enter your email and password.")
	}
	keys := []string{"ip:" + clientIP(r), "email:" + strings.ToLower(email)}
	for _, k := range keys {
		t, err := s.deps.DB.ThrottleState(ctx, k)
		if err != nil {
			return err
		}
		if t.LockedUntil != nil && time.Now().Before(*t.LockedUntil) {
			return fail(http.StatusTooManyRequests, "Too many failed sign-ins. Try again in "+
				time.Until(*t.LockedUntil).Round(time.Minute).String()+".")
		}
	}
	user, err := s.deps.DB.FindUserByEmail(ctx, email)
	hash := dummyHash
	if err == nil {
		hash = user.PasswordHash
	} else if hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return err
	}
	ok, verr := verifyPassword(ctx, hash, password)
	if verr != nil && err == nil {
		s.deps.Logger.Error("stored password hash is unreadable", "user", user.ID, "err", verr)
	}
	if err != nil || !ok {
		s.recordFailure(ctx, keys[0], maxFailuresAddress)
		s.recordFailure(ctx, keys[1], maxFailuresAccount)
		return fail(http.StatusUnauthorized, "Wrong email or password.")
	}
	if err := s.deps.DB.ClearThrottle(ctx, keys[1]); err != nil {
		s.deps.Logger.Warn("clear sign-in throttle", "err", err)
	}
	if err := s.startSession(w, r, user); err != nil {
		return err
	}
	return redirect(w, r, form.Next)
}

func (s *Server) recordFailure(ctx context.Context, key string, max int) {
	if _, err := s.deps.DB.RecordFailedLogin(ctx, key, throttleWindow, max, throttleLock); err != nil {
		s.deps.Logger.Warn("record failed sign-in", "err", err)
	}
}

type registerForm struct {
	Code  string
	Email string
}

func (s *Server) handleRegisterForm(w http.ResponseWriter, r *http.Request) error {
	return s.render(w, r, http.StatusOK, "register", page{Title: "Register",
		Data: registerForm{Code: strings.TrimSpace(r.URL.Query().Get("code"))}})
}

// handleRegister creates an account with an invite code (form contract:
// POST /register code, email, password → 303, or the form again with 4xx).
func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) error {
	form := registerForm{Code: strings.TrimSpace(r.PostFormValue("code")), Email: strings.TrimSpace(r.PostFormValue("email"))}
	password := r.PostFormValue("password")
	fail := func(err error) error {
		if statusFor(err) >= 500 {
			return err
		}
		return s.render(w, r, statusFor(err), "register", page{Title: "Register", Error: hoard.ErrorMessage(err), Data: form})
	}
	if form.Code == "" {
		return fail(hoard.Errorf(hoard.EINVALID, "Registration needs an invite code."))
	}
	if err := checkEmail(form.Email); err != nil {
		return fail(err)
	}
	if err := checkNewPassword(password); err != nil {
		return fail(err)
	}
	// Refuse a bad code before spending a password hash on it.
	inv, err := s.deps.DB.FindInviteByCode(r.Context(), form.Code)
	if err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return err
	}
	if err := store.InviteRefusal(inv, time.Now()); err != nil {
		return fail(err)
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
	}
	return s.render(w, r, http.StatusOK, "settings", p)
}

// handleChangePassword checks the current password, stores the new one and
// signs out every other session of the user.
func (s *Server) handleChangePassword(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	user := userFrom(ctx)
	fail := func(status int, msg string) error {
		p, err := s.settingsPage(r, linkCard{})
		if err != nil {
			return err
		}
		p.Error = msg
		return s.render(w, r, status, "settings", p)
	}
	ok, err := verifyPassword(ctx, user.PasswordHash, r.PostFormValue("current"))
	if err != nil || !ok {
		s.recordFailure(ctx, "email:"+strings.ToLower(user.Email), maxFailuresAccount)
		return fail(http.StatusUnauthorized, "The current password is wrong.")
	}
	next := r.PostFormValue("new")
	if err := checkNewPassword(next); err != nil {
		return fail(http.StatusUnprocessableEntity, hoard.ErrorMessage(err))
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
		if err := tx.SetUserPassword(ctx, user.ID, hash); err != nil {
			return err
		}
		return tx.DeleteUserSessions(ctx, user.ID, keep)
	})
	if err != nil {
		return err
	}
	return redirect(w, r, "/settings?changed=1")
}
