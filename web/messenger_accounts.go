package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
)

// Messenger accounts sign in on the worker, which holds their clients: the
// web only queues the steps. Adding an account (or "Log in again") queues
// account_login, which makes the platform send a code; the code and then,
// with two-step verification, the password are sealed with AUTH_SECRET
// (messenger.Sealer) before they reach the account row, and an
// account_sign_in job checks them. The worker clears them in the
// transaction that records the outcome. They are never logged, never
// rendered back and never part of a job's args.

// normalizePhone validates a phone number in E.164 form (+, country code,
// up to 15 digits); spaces, dashes, dots and parentheses between digits are
// dropped.
func normalizePhone(s string) (string, error) {
	s = strings.TrimSpace(s)
	var b strings.Builder
	for i, c := range s {
		switch {
		case c == '+' && i == 0:
			b.WriteRune(c)
		case c >= '0' && c <= '9':
			b.WriteRune(c)
		case c == ' ' || c == '-' || c == '.' || c == '(' || c == ')':
		default:
			return "", hoard.Errorf(hoard.EINVALID, "A phone number has only digits after the leading + (E.164, e.g. +15551234567).")
		}
	}
	p := b.String()
	if !strings.HasPrefix(p, "+") {
		return "", hoard.Errorf(hoard.EINVALID, "Give the phone number in international form with its country code, starting with + (e.g. +15551234567).")
	}
	if n := len(p) - 1; n < 7 || n > 15 || p[1] == '0' {
		return "", hoard.Errorf(hoard.EINVALID, "A phone number has a country code and 7 to 15 digits in all, not starting with 0 (E.164).")
	}
	return p, nil
}

// accountJSON is a messenger account as the admin page shows it; it holds
// no login secret.
type accountJSON struct {
	ID           int64   `json:"id"`
	Phone        string  `json:"phone"`
	DisplayName  string  `json:"display_name"`
	AuthState    string  `json:"auth_state"`
	AuthError    string  `json:"auth_error,omitempty"`
	LoginPending bool    `json:"login_pending"`
	IsPremium    bool    `json:"is_premium"`
	IsActive     bool    `json:"is_active"`
	LastSeenAt   *string `json:"last_seen_at"`
}

func toAccountJSON(a *hoard.Account) accountJSON {
	out := accountJSON{ID: a.ID, Phone: a.Phone, DisplayName: a.DisplayName, AuthState: string(a.AuthState),
		AuthError: a.AuthError, LoginPending: a.LoginPending, IsPremium: a.IsPremium, IsActive: a.IsActive}
	if a.LastSeenAt != nil {
		v := a.LastSeenAt.UTC().Format(time.RFC3339)
		out.LastSeenAt = &v
	}
	return out
}

// accountBusy reports an account the worker is working on: the admin page
// polls while one is.
func accountBusy(a *hoard.Account) bool {
	return a.AuthState == hoard.AuthPending || a.LoginPending
}

// handleAPIAccounts answers GET /api/messenger/accounts with {"items":[…],
// "busy":bool}; busy while the worker has a login step to take.
func (s *Server) handleAPIAccounts(w http.ResponseWriter, r *http.Request) error {
	accounts, err := s.deps.DB.ListAccounts(r.Context())
	if err != nil {
		return err
	}
	items := make([]accountJSON, len(accounts))
	busy := false
	for i := range accounts {
		items[i] = toAccountJSON(&accounts[i])
		busy = busy || accountBusy(&accounts[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "busy": busy})
	return nil
}

// addAccountParams are the parameters of POST /admin/messenger/accounts.
type addAccountParams struct {
	Phone string `form:"phone" validate:"max=32"`
}

// handleAddAccount adds a messenger account by phone number and queues its
// login (the platform sends a code) in one transaction.
func (s *Server) handleAddAccount(w http.ResponseWriter, r *http.Request) error {
	phone, err := normalizePhone(paramsOf[addAccountParams](r).Phone)
	if err != nil {
		return aboutField("phone", err)
	}
	ctx := r.Context()
	var acc *hoard.Account
	err = s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		var err error
		if acc, err = tx.CreateAccount(ctx, phone); err != nil {
			if hoard.ErrorCode(err) == hoard.ECONFLICT {
				return &fieldError{field: "phone", err: hoard.Errorf(hoard.ECONFLICT, "An account with this phone number exists already.")}
			}
			return err
		}
		return s.queueLogin(r, tx, acc.ID)
	})
	if err != nil {
		return err
	}
	s.deps.Logger.Info("messenger account added", "account", acc.ID)
	return s.accountDone(w, r, http.StatusCreated, acc, "account-added")
}

// handleAccountLogin starts a new login of an account (re-login): the
// account goes back to PENDING, forgets any secret in flight, and the
// worker either finds the session still signed in or has a new code sent.
func (s *Server) handleAccountLogin(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "accountId")
	if err != nil {
		return err
	}
	ctx := r.Context()
	var acc *hoard.Account
	err = s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		var err error
		if acc, err = tx.StartAccountLogin(ctx, id); err != nil {
			return notFoundAs(err, "No such account.")
		}
		return s.queueLogin(r, tx, id)
	})
	if err != nil {
		return err
	}
	return s.accountDone(w, r, http.StatusAccepted, acc, "login")
}

func (s *Server) queueLogin(r *http.Request, tx *store.DB, id int64) error {
	if _, err := s.deps.Queue.InsertTx(r.Context(), tx.Tx(), hoard.AccountLoginArgs{AccountID: id}, nil); err != nil {
		return fmt.Errorf("queue account login: %w", err)
	}
	return nil
}

// accountCodeParams are the parameters of POST
// /admin/messenger/accounts/{accountId}/code.
type accountCodeParams struct {
	Code string `form:"code" validate:"max=32"`
}

// handleAccountCode takes the login code of an account that waits for one.
func (s *Server) handleAccountCode(w http.ResponseWriter, r *http.Request) error {
	code := strings.Map(func(c rune) rune {
		if c == ' ' || c == '-' {
			return -1
		}
		return c
	}, paramsOf[accountCodeParams](r).Code)
	if len(code) < 3 || len(code) > 12 || strings.Trim(code, "0123456789") != "" {
		return invalidField("code", "The login code is the 3 to 12 digits the platform sent.")
	}
	return s.submitSecret(w, r, messenger.SecretCode, code)
}

// accountPasswordParams are the parameters of POST
// /admin/messenger/accounts/{accountId}/password.
type accountPasswordParams struct {
	Password string `form:"password,raw" validate:"max=256"`
}

// handleAccountPassword takes the two-step verification password of an
// account that waits for it.
func (s *Server) handleAccountPassword(w http.ResponseWriter, r *http.Request) error {
	password := paramsOf[accountPasswordParams](r).Password
	if password == "" {
		return invalidField("password", "Type the account's two-step verification password (256 characters at most).")
	}
	return s.submitSecret(w, r, messenger.SecretPassword, password)
}

// submitSecret seals a login code or password and hands it to the worker:
// the sealed secret on the account and the account_sign_in job in one
// transaction. ECONFLICT when the account does not wait for that secret or
// is already checking one.
func (s *Server) submitSecret(w http.ResponseWriter, r *http.Request, secret, value string) error {
	id, err := pathID(r, "accountId")
	if err != nil {
		return err
	}
	if s.deps.Secrets == nil {
		return hoard.Errorf(hoard.EINTERNAL, "Login secrets cannot be sealed: AUTH_SECRET is not configured.")
	}
	sealed, err := s.deps.Secrets.Seal(messenger.LoginLabel(id, secret), []byte(value))
	if err != nil {
		return fmt.Errorf("seal login %s: %w", secret, err)
	}
	ctx := r.Context()
	err = s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		submit := tx.SubmitAccountCode
		if secret == messenger.SecretPassword {
			submit = tx.SubmitAccountPassword
		}
		if err := submit(ctx, id, sealed); err != nil {
			switch hoard.ErrorCode(err) {
			case hoard.ENOTFOUND:
				return hoard.Errorf(hoard.ENOTFOUND, "No such account.")
			case hoard.ECONFLICT:
				return hoard.WrapError(hoard.ECONFLICT, err, "The account is not waiting for a "+map[string]string{
					messenger.SecretCode: "login code", messenger.SecretPassword: "password"}[secret]+
					", or is still checking the last one. Reload the page.")
			}
			return err
		}
		if _, err := s.deps.Queue.InsertTx(ctx, tx.Tx(), hoard.AccountSignInArgs{AccountID: id}, nil); err != nil {
			return fmt.Errorf("queue account sign-in: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	acc, err := s.deps.DB.FindAccountByID(ctx, id)
	if err != nil {
		return err
	}
	return s.accountDone(w, r, http.StatusAccepted, acc, "login-"+secret)
}

// accountDone answers an account action: JSON with the account for API
// callers, else a redirect to the accounts section of the admin page.
func (s *Server) accountDone(w http.ResponseWriter, r *http.Request, status int, acc *hoard.Account, done string) error {
	if wantsJSON(r) {
		writeJSON(w, status, map[string]any{"account": toAccountJSON(acc)})
		return nil
	}
	return redirect(w, r, "/admin/messenger?done="+done+"#accounts")
}

// destinationParams are the parameters of POST
// /admin/messenger/destination: choice "<channel id>:<account id>", or the
// two ids apart.
type destinationParams struct {
	Choice    string `form:"choice" validate:"max=64"`
	ChannelID int64  `form:"channel_id" validate:"gte=0"`
	AccountID int64  `form:"account_id" validate:"gte=0"`
}

// handleSetDestination makes a channel the destination, posted to by the
// chosen account through its map of the channel (which becomes the WRITER
// map). The form sends `choice` as "<channel id>:<account id>" (or
// `channel_id` and `account_id`).
func (s *Server) handleSetDestination(w http.ResponseWriter, r *http.Request) error {
	in := paramsOf[destinationParams](r)
	channelID, accountID := in.ChannelID, in.AccountID
	if in.Choice != "" {
		chStr, accStr, _ := strings.Cut(in.Choice, ":")
		var err1, err2 error
		channelID, err1 = strconv.ParseInt(chStr, 10, 64)
		accountID, err2 = strconv.ParseInt(accStr, 10, 64)
		if err1 != nil || err2 != nil {
			channelID, accountID = 0, 0
		}
	}
	if channelID <= 0 || accountID <= 0 {
		return hoard.Errorf(hoard.EINVALID, "Choose a channel and the account that posts to it.")
	}
	ctx := r.Context()
	var dest *hoard.Channel
	err := s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		acc, err := tx.FindAccountByID(ctx, accountID)
		if hoard.ErrorCode(err) == hoard.ENOTFOUND {
			return hoard.Errorf(hoard.EINVALID, "No such account.")
		} else if err != nil {
			return err
		}
		if acc.AuthState != hoard.AuthAuthenticated {
			return hoard.Errorf(hoard.EINVALID, "The account %s is not signed in.", acc.Phone)
		}
		dest, err = tx.SetDestination(ctx, channelID, accountID)
		if hoard.ErrorCode(err) == hoard.EINVALID || hoard.ErrorCode(err) == hoard.ENOTFOUND {
			return hoard.WrapError(hoard.EINVALID, err, "The account has no access to that channel: add the channel with it first.")
		}
		return err
	})
	if err != nil {
		return err
	}
	s.forgetChannelTitles()
	s.deps.Logger.Info("destination channel set", "channel", dest.ID, "account", accountID)
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, map[string]any{"channel_id": dest.ID, "title": dest.Title, "account_id": accountID})
		return nil
	}
	return redirect(w, r, "/admin/messenger?done=destination")
}

// handleRemoveAccount removes an account that is not signed in (a failed
// or abandoned login), with its channel settings and stored session; a
// signed-in account is refused (409).
func (s *Server) handleRemoveAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "accountId")
	if err != nil {
		return err
	}
	if err := s.deps.DB.RemoveSignedOutAccount(r.Context(), id); err != nil {
		return notFoundAs(err, "No such account.")
	}
	s.forgetChannelTitles()
	return redirect(w, r, withDone(backOr(r, "/admin/messenger#accounts"), "account-removed"))
}
