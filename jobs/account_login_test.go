package jobs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/messenger/telegram"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
)

// sessionLogins is a worker's Logins: one client per account on a shared
// session store, opened on first use. newClient forgets the client, so the
// next step runs on a fresh client of the same session, as on another
// worker process or after a restart.
type sessionLogins struct {
	t   *testing.T
	cfg telegram.Config

	mu     sync.Mutex
	client *telegram.Account
}

func (l *sessionLogins) Login(ctx context.Context, _ int64) (messenger.Account, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.client == nil {
		acc, err := telegram.NewAccount(ctx, l.cfg)
		if err != nil {
			return nil, err
		}
		l.t.Cleanup(func() { _ = acc.Close() })
		l.client = acc
	}
	return l.client, nil
}

func (l *sessionLogins) newClient() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.client = nil
}

type loginTest struct {
	t      *testing.T
	ctx    context.Context
	db     *store.DB
	logins *sessionLogins
	sealer *messenger.Sealer
	login  *rivertest.Worker[hoard.AccountLoginArgs, pgx.Tx]
	signIn *rivertest.Worker[hoard.AccountSignInArgs, pgx.Tx]
	acc    *hoard.Account
}

func newLoginTest(t *testing.T, env *messengertest.Env) *loginTest {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	db := storetest.NewTx(t)
	sealer, err := messenger.NewSealer("a secret of at least thirty-two bytes")
	if err != nil {
		t.Fatal(err)
	}
	acc, err := db.CreateAccount(ctx, env.Info.Phone)
	if err != nil {
		t.Fatal(err)
	}
	logins := &sessionLogins{t: t, cfg: env.Config("account:1")}
	deps := Deps{DB: db, Logger: discardLogger(), Logins: logins, Secrets: sealer}
	return &loginTest{t: t, ctx: ctx, db: db, logins: logins, sealer: sealer, acc: acc,
		login: rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{},
			river.Worker[hoard.AccountLoginArgs](newAccountLoginWorker(newParts(deps)))),
		signIn: rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{},
			river.Worker[hoard.AccountSignInArgs](newAccountSignInWorker(newParts(deps)))),
	}
}

// startLogin works the account_login job.
func (lt *loginTest) startLogin() {
	lt.t.Helper()
	if _, err := lt.login.Work(lt.ctx, lt.t, lt.db.Tx(), hoard.AccountLoginArgs{AccountID: lt.acc.ID}, nil); err != nil {
		lt.t.Fatalf("login job: %v", err)
	}
}

// submit seals a code or password the way the web does and works the
// account_sign_in job.
func (lt *loginTest) submit(secret, value string) {
	lt.t.Helper()
	sealed, err := lt.sealer.Seal(messenger.LoginLabel(lt.acc.ID, secret), []byte(value))
	if err != nil {
		lt.t.Fatal(err)
	}
	submit := lt.db.SubmitAccountCode
	if secret == messenger.SecretPassword {
		submit = lt.db.SubmitAccountPassword
	}
	if err := submit(lt.ctx, lt.acc.ID, sealed); err != nil {
		lt.t.Fatalf("submit %s: %v", secret, err)
	}
	if _, err := lt.signIn.Work(lt.ctx, lt.t, lt.db.Tx(), hoard.AccountSignInArgs{AccountID: lt.acc.ID}, nil); err != nil {
		lt.t.Fatalf("sign-in job: %v", err)
	}
}

// state returns the account and checks that no code or password is left.
func (lt *loginTest) state(want hoard.AuthState) *hoard.Account {
	lt.t.Helper()
	a, err := lt.db.FindAccountByID(lt.ctx, lt.acc.ID)
	if err != nil {
		lt.t.Fatal(err)
	}
	if a.AuthState != want {
		lt.t.Fatalf("state = %s (%s), want %s", a.AuthState, a.AuthError, want)
	}
	s, err := lt.db.FindAccountLoginSecrets(lt.ctx, lt.acc.ID)
	if err != nil || s.Code != nil || s.Password != nil {
		lt.t.Fatalf("secrets left after the step: code %v, password %v (%v)", s.Code != nil, s.Password != nil, err)
	}
	if (s.CodeRequest != nil) != (want == hoard.AuthAwaitingCode) {
		lt.t.Fatalf("code request kept = %v in %s", s.CodeRequest != nil, want)
	}
	return a
}

func TestAccountLoginWithCode(t *testing.T) {
	env := messengertest.Start(t, "")
	lt := newLoginTest(t, env)
	lt.startLogin()
	lt.state(hoard.AuthAwaitingCode)
	if env.Emu.Calls("auth.sendCode") != 1 {
		t.Fatalf("sendCode calls = %d", env.Emu.Calls("auth.sendCode"))
	}
	// A wrong code: the account keeps waiting for the right one.
	lt.submit(messenger.SecretCode, "00000")
	if a := lt.state(hoard.AuthAwaitingCode); !strings.Contains(a.AuthError, "wrong") {
		t.Fatalf("error after a wrong code = %q", a.AuthError)
	}
	// The right code, on a fresh client of the same session (another
	// worker, or after a restart): the code request came from the row.
	lt.logins.newClient()
	lt.submit(messenger.SecretCode, env.Info.Code)
	a := lt.state(hoard.AuthAuthenticated)
	if a.PlatformUserID != env.Emu.AccountID() || a.IsPremium || a.LastSeenAt == nil || a.AuthError != "" {
		t.Fatalf("account = %+v", a)
	}
	// Log in again with the session still valid: no new code.
	if _, err := lt.db.StartAccountLogin(lt.ctx, lt.acc.ID); err != nil {
		t.Fatal(err)
	}
	lt.logins.newClient()
	lt.startLogin()
	lt.state(hoard.AuthAuthenticated)
	if env.Emu.Calls("auth.sendCode") != 1 {
		t.Fatalf("re-login of a valid session sent a code (%d calls)", env.Emu.Calls("auth.sendCode"))
	}
}

func TestAccountLoginWith2FAPassword(t *testing.T) {
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(seed, []byte(`{"account": {"phone": "+15550000002", "password": "correct horse", "premium": true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := messengertest.StartIn(t, seed, dir)
	lt := newLoginTest(t, env)
	lt.startLogin()
	lt.state(hoard.AuthAwaitingCode)
	lt.submit(messenger.SecretCode, env.Info.Code)
	lt.state(hoard.AuthAwaitingPassword)
	lt.logins.newClient()
	lt.submit(messenger.SecretPassword, "wrong")
	if a := lt.state(hoard.AuthAwaitingPassword); !strings.Contains(a.AuthError, "password is wrong") {
		t.Fatalf("error after a wrong password = %q", a.AuthError)
	}
	lt.submit(messenger.SecretPassword, "correct horse")
	if a := lt.state(hoard.AuthAuthenticated); !a.IsPremium || a.PlatformUserID != env.Emu.AccountID() {
		t.Fatalf("account = %+v (want the Premium flag)", a)
	}
}

func TestAccountLoginFailures(t *testing.T) {
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(seed, []byte(`{"account": {"phone": "+15550000003"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := messengertest.StartIn(t, seed, dir)
	lt := newLoginTest(t, env)
	// A phone the platform does not know.
	other, err := lt.db.CreateAccount(lt.ctx, "+15559999999")
	if err != nil {
		t.Fatal(err)
	}
	lt.acc = other
	if _, err := lt.login.Work(lt.ctx, t, lt.db.Tx(), hoard.AccountLoginArgs{AccountID: other.ID}, nil); err == nil {
		t.Fatal("login of an unknown phone succeeded")
	}
	if a := lt.state(hoard.AuthFailed); a.AuthError != "send code: The platform knows no account with this phone number." {
		t.Fatalf("error = %q", a.AuthError)
	}
	// A code sealed for another account does not open: FAILED, cleared.
	acc, err := lt.db.FindAccountByPhone(lt.ctx, env.Info.Phone)
	if err != nil {
		t.Fatal(err)
	}
	lt.acc = acc
	lt.startLogin()
	sealed, _ := lt.sealer.Seal(messenger.LoginLabel(other.ID, messenger.SecretCode), []byte(env.Info.Code))
	if err := lt.db.SubmitAccountCode(lt.ctx, acc.ID, sealed); err != nil {
		t.Fatal(err)
	}
	if _, err := lt.signIn.Work(lt.ctx, t, lt.db.Tx(), hoard.AccountSignInArgs{AccountID: acc.ID}, nil); err == nil {
		t.Fatal("a code sealed for another account was used")
	}
	if a := lt.state(hoard.AuthFailed); strings.Contains(a.AuthError, env.Info.Code) {
		t.Fatalf("error shows the code: %q", a.AuthError)
	}
}
