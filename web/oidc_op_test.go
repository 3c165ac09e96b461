package web

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"html/template"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// testOP is a real OpenID provider for the tests: zitadel/oidc's certified
// op package serving on loopback, with the library's in-memory example
// storage, hoard registered as a confidential web client, and a minimal
// login page (username and password). Its issuer is http://localhost:port
// while hoard's test server is http://127.0.0.1:port, so a browser sees
// two sites, as with a real provider.
type testOP struct {
	t        testing.TB
	issuer   string
	clientID string
	secret   string
	users    *testOPUsers
	store    *testOPStorage
	server   *httptest.Server
}

// testOPPassword is every test user's password at the provider.
const testOPPassword = "provider password"

// newTestOP starts a provider whose client redirects to hoard's callback at
// appURL.
func newTestOP(t testing.TB, appURL string) *testOP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &testOP{t: t, issuer: "http://localhost:" + portOf(ln.Addr()), clientID: "hoard-client", secret: "hoard client secret",
		users: &testOPUsers{byID: map[string]*storage.User{}}}
	client := storage.WebClient(o.clientID, o.secret, callbackURL(appURL, oidcKey))
	o.store = &testOPStorage{Storage: storage.NewStorageWithClients(o.users, map[string]*storage.Client{o.clientID: client}), users: o.users}
	provider, err := op.NewProvider(&op.Config{CryptoKey: sha256.Sum256([]byte("test op key")), CodeMethodS256: true},
		o.store, op.StaticIssuer(o.issuer), op.WithAllowInsecure(), op.WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	login := &testOPLogin{store: o.store, callback: op.AuthCallbackURL(provider)}
	intercept := op.NewIssuerInterceptor(provider.IssuerFromRequest)
	mux.HandleFunc("GET /login/username", login.form)
	mux.HandleFunc("POST /login/username", intercept.HandlerFunc(login.check))
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.Handle("/", provider)
	o.server = &httptest.Server{Listener: ln, Config: &http.Server{Handler: mux}}
	o.server.Start()
	t.Cleanup(o.server.Close)
	return o
}

func portOf(a net.Addr) string {
	_, port, _ := net.SplitHostPort(a.String())
	return port
}

// config is the OIDCConfig that points hoard at the provider.
func (o *testOP) config() *OIDCConfig {
	return &OIDCConfig{Issuer: o.issuer, ClientID: o.clientID, ClientSecret: o.secret, DisplayName: "Test IdP"}
}

// addUser registers a person at the provider; username is what the login
// page takes, id the subject of their tokens.
func (o *testOP) addUser(u testOPUser) {
	o.users.mu.Lock()
	defer o.users.mu.Unlock()
	o.users.byID[u.ID] = &storage.User{ID: u.ID, Username: u.ID, Password: testOPPassword, Email: u.Email,
		EmailVerified: u.EmailVerified, FirstName: "Test", LastName: u.ID}
	if o.users.groups == nil {
		o.users.groups = map[string][]string{}
	}
	o.users.groups[u.ID] = u.Groups
}

// signWithAnotherKey makes the provider sign ID tokens with a key it does
// not publish (under the published key's id), or with its own again.
func (o *testOP) signWithAnotherKey(on bool) {
	if !on {
		o.store.rogue.Store(nil)
		return
	}
	published, err := o.store.Storage.SigningKey(context.Background())
	if err != nil {
		o.t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		o.t.Fatal(err)
	}
	o.store.rogue.Store(&rogueKey{id: published.ID(), key: key})
}

// testOPUser is a person at the test provider.
type testOPUser struct {
	ID            string
	Email         string
	EmailVerified bool
	Groups        []string // the "groups" claim of their user information
}

// testOPUsers is the example storage's user store, safe for concurrent use.
type testOPUsers struct {
	mu     sync.RWMutex
	byID   map[string]*storage.User
	groups map[string][]string
}

func (u *testOPUsers) GetUserByID(id string) *storage.User {
	u.mu.RLock()
	defer u.mu.RUnlock()
	return u.byID[id]
}

func (u *testOPUsers) GetUserByUsername(name string) *storage.User { return u.GetUserByID(name) }

func (u *testOPUsers) ExampleClientID() string { return "service" }

// testOPStorage is the example storage with a groups claim in the user
// information and, on demand, a signing key nobody can verify.
type testOPStorage struct {
	*storage.Storage
	users *testOPUsers
	rogue atomic.Pointer[rogueKey]
}

func (s *testOPStorage) SigningKey(ctx context.Context) (op.SigningKey, error) {
	if k := s.rogue.Load(); k != nil {
		return k, nil
	}
	return s.Storage.SigningKey(ctx)
}

func (s *testOPStorage) SetUserinfoFromToken(ctx context.Context, info *oidc.UserInfo, tokenID, subject, origin string) error {
	if err := s.Storage.SetUserinfoFromToken(ctx, info, tokenID, subject, origin); err != nil {
		return err
	}
	s.users.mu.RLock()
	defer s.users.mu.RUnlock()
	if g := s.users.groups[info.Subject]; g != nil {
		info.AppendClaims("groups", g)
	}
	return nil
}

// rogueKey is an RSA key the provider does not publish.
type rogueKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k *rogueKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *rogueKey) Key() any                                    { return k.key }
func (k *rogueKey) ID() string                                  { return k.id }

// testOPLogin is the provider's login page.
type testOPLogin struct {
	store    *testOPStorage
	callback func(context.Context, string) string
}

var testOPLoginPage = template.Must(template.New("login").Parse(`<!doctype html><title>Test IdP</title>
<h1>Test IdP</h1>{{with .Error}}<p id="op-error">{{.}}</p>{{end}}
<form method="post" action="/login/username"><input type="hidden" name="id" value="{{.ID}}">
<label>Username <input name="username"></label><label>Password <input type="password" name="password"></label>
<button type="submit" id="op-submit">Sign in</button></form>`))

func (l *testOPLogin) form(w http.ResponseWriter, r *http.Request) {
	_ = testOPLoginPage.Execute(w, map[string]string{"ID": r.FormValue("authRequestID")})
}

func (l *testOPLogin) check(w http.ResponseWriter, r *http.Request) {
	id := r.FormValue("id")
	if err := l.store.CheckUsernamePassword(r.FormValue("username"), r.FormValue("password"), id); err != nil {
		w.WriteHeader(http.StatusUnauthorized)
		_ = testOPLoginPage.Execute(w, map[string]string{"ID": id, "Error": err.Error()})
		return
	}
	http.Redirect(w, r, l.callback(r.Context(), id), http.StatusFound)
}
