package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/hoard/hoard"
	"golang.org/x/oauth2"
)

// Sign-in with an identity provider: the providers. An OpenID Connect
// provider is found by discovery (go-oidc) and signs in with the
// authorization code flow, PKCE (S256), a state and a nonce; its ID token is
// verified against the issuer's published keys. GitHub speaks OAuth 2 with
// PKCE and its REST API (oidc_github.go). The flows themselves, and the
// rules about who may get in, are in oidc_flow.go.

// SignInConfig configures sign-in through identity providers
// (Deps.SignIn). The zero value offers passwords only.
type SignInConfig struct {
	OIDC   *OIDCConfig
	GitHub *GitHubConfig
	// EmailDomains lets a person whose provider vouches for an address in
	// one of these domains (exact match, any letter case) create an account
	// without an invite code. Empty: every new account needs an invite.
	EmailDomains []string
	// HTTPClient makes the calls to the providers (nil: a client with a
	// providerTimeout timeout).
	HTTPClient *http.Client
}

// OIDCConfig is an OpenID Connect provider (OIDC_* variables).
type OIDCConfig struct {
	Issuer       string // discovery is at Issuer + "/.well-known/openid-configuration"
	ClientID     string
	ClientSecret string
	DisplayName  string   // the button says "Sign in with DisplayName" ("": the issuer's host)
	Scopes       []string // asked for besides openid, email and profile
	// AdminClaim names the claim (a dotted path into nested objects, e.g.
	// realm_access.roles) that decides the role of those who sign in
	// through the provider: ADMIN when it holds one of AdminValues, USER
	// otherwise. "": the provider never changes a role.
	AdminClaim  string
	AdminValues []string
}

// providerTimeout bounds each call to a provider when SignInConfig has no
// HTTPClient.
const providerTimeout = 10 * time.Second

// identityProvider is one way to sign in at a provider.
type identityProvider interface {
	// Key names the provider in paths (/auth/{key}/…) and in stored links.
	Key() string
	// Name is what the sign-in button calls the provider.
	Name() string
	// authCodeURL is where to send the browser: the provider's consent page
	// for state, with the nonce and the PKCE challenge of verifier.
	authCodeURL(ctx context.Context, state, nonce, verifier string) (string, error)
	// identify exchanges the code the provider sent back (with the PKCE
	// verifier) and returns the account it vouches for; nonce is what an
	// ID token must carry.
	identify(ctx context.Context, code, verifier, nonce string) (providerAccount, error)
	// authURLs are the addresses authCodeURL sends browsers to, as far as
	// they are known (for the pages' form-action policy).
	authURLs() []string
}

// providerAccount is a person as a provider describes them.
type providerAccount struct {
	Issuer        string // who vouches: the OIDC issuer, or GitHub's address
	Subject       string // the provider's stable id of the person
	Email         string
	EmailVerified bool
	// Role is what the configured claim mapping makes of the claims; ""
	// when no mapping is configured.
	Role hoard.Role
}

// Provider answers: a provider that is down or unreachable is not a bug of
// hoard (502), one that refused or whose answer does not verify is a failed
// sign-in (401).
const codeProviderDown = "provider_down"

func providerDown(name string, err error) error {
	return hoard.WrapError(codeProviderDown, err, fmt.Sprintf("%s could not be reached: try again in a moment.", name))
}

func providerRefused(name string, err error, reason string) error {
	return hoard.WrapError(hoard.EUNAUTHORIZED, err, fmt.Sprintf("%s did not sign you in: %s", name, reason))
}

// exchangeError classifies a failed code exchange: the provider answering
// with an OAuth error (an unknown, used or expired code, a wrong PKCE
// verifier) refused; anything else is the provider being unreachable.
func exchangeError(name string, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return providerRefused(name, err, "the sign-in code was refused (it may have been used already). Start again.")
	}
	return providerDown(name, fmt.Errorf("exchange code: %w", err))
}

// newProviders builds the configured providers, in the order their buttons
// show, with their redirect URLs under appURL.
func newProviders(appURL string, cfg SignInConfig) ([]identityProvider, error) {
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: providerTimeout}
	}
	var out []identityProvider
	if c := cfg.OIDC; c != nil {
		if u, err := url.Parse(c.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("web: OIDC issuer %q is not an absolute http(s) URL", c.Issuer)
		}
		if c.ClientID == "" {
			return nil, errors.New("web: OIDC client id is empty")
		}
		out = append(out, &oidcProvider{cfg: *c, client: client, redirectURL: callbackURL(appURL, oidcKey)})
	}
	if c := cfg.GitHub; c != nil {
		p, err := newGitHubProvider(*c, client, callbackURL(appURL, githubKey))
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// discoverProviders logs each provider's redirect URL (to register at the
// provider) and fetches the OpenID Connect providers' discovery documents
// in the background, so that the pages' form-action policy knows
// their authorization endpoints from the start; a failure is logged and
// tried again at the first sign-in.
func (s *Server) discoverProviders(ctx context.Context) {
	for _, p := range s.providers {
		s.deps.Logger.Info("sign-in through an identity provider", "provider", p.Key(), "name", p.Name(),
			"redirect_url", callbackURL(s.deps.AppURL, p.Key()))
		if op, ok := p.(*oidcProvider); ok {
			go func() {
				if _, err := op.discover(ctx); err != nil && ctx.Err() == nil {
					s.deps.Logger.Warn("identity provider not reachable yet", "provider", op.Key(), "err", err)
				}
			}()
		}
	}
}

// callbackURL is the redirect URL to register at a provider.
func callbackURL(appURL, key string) string {
	return strings.TrimRight(appURL, "/") + "/auth/" + key + "/callback"
}

// oidcKey is the OpenID Connect provider's key.
const oidcKey = "oidc"

// oidcProvider signs in with an OpenID Connect provider.
type oidcProvider struct {
	cfg         OIDCConfig
	client      *http.Client
	redirectURL string

	mu         sync.Mutex
	discovered *oidc.Provider // nil until discovery succeeded
}

// Key is "oidc": hoard offers one OpenID Connect provider.
func (p *oidcProvider) Key() string { return oidcKey }

// Name is the configured display name, or else the issuer's host.
func (p *oidcProvider) Name() string {
	if p.cfg.DisplayName != "" {
		return p.cfg.DisplayName
	}
	u, _ := url.Parse(p.cfg.Issuer) // newProviders checked it
	return u.Hostname()
}

// discover fetches the issuer's discovery document once; a failure is
// tried again on the next sign-in, so hoard starts while its provider is
// down.
func (p *oidcProvider) discover(ctx context.Context) (*oidc.Provider, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.discovered != nil {
		return p.discovered, nil
	}
	dp, err := oidc.NewProvider(oidc.ClientContext(ctx, p.client), p.cfg.Issuer)
	if err != nil {
		return nil, providerDown(p.Name(), fmt.Errorf("discover %s: %w", p.cfg.Issuer, err))
	}
	p.discovered = dp
	return dp, nil
}

// authURLs are the issuer and, once discovered, the authorization
// endpoint (most providers serve both from one origin).
func (p *oidcProvider) authURLs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.discovered == nil {
		return []string{p.cfg.Issuer}
	}
	return []string{p.cfg.Issuer, p.discovered.Endpoint().AuthURL}
}

func (p *oidcProvider) oauth(dp *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, Endpoint: dp.Endpoint(),
		RedirectURL: p.redirectURL, Scopes: append([]string{oidc.ScopeOpenID, "email", "profile"}, p.cfg.Scopes...)}
}

func (p *oidcProvider) authCodeURL(ctx context.Context, state, nonce, verifier string) (string, error) {
	dp, err := p.discover(ctx)
	if err != nil {
		return "", err
	}
	return p.oauth(dp).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), nil
}

// identify exchanges the code, verifies the ID token (signature against the
// issuer's keys, issuer, audience, expiry, nonce, access-token hash) and
// reads the person's claims from it and from the userinfo endpoint, whose
// subject must be the token's.
func (p *oidcProvider) identify(ctx context.Context, code, verifier, nonce string) (providerAccount, error) {
	dp, err := p.discover(ctx)
	if err != nil {
		return providerAccount{}, err
	}
	ctx = oidc.ClientContext(ctx, p.client)
	tok, err := p.oauth(dp).Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return providerAccount{}, exchangeError(p.Name(), err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return providerAccount{}, providerRefused(p.Name(), errors.New("no id_token in the token response"), "its answer had no ID token.")
	}
	idt, err := dp.Verifier(&oidc.Config{ClientID: p.cfg.ClientID}).Verify(ctx, raw)
	if err != nil {
		return providerAccount{}, providerRefused(p.Name(), fmt.Errorf("verify ID token: %w", err), "its ID token could not be verified.")
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(nonce)) != 1 {
		return providerAccount{}, providerRefused(p.Name(), errors.New("ID token nonce differs"), "its ID token belongs to another sign-in.")
	}
	if idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			return providerAccount{}, providerRefused(p.Name(), err, "its access token does not match the ID token.")
		}
	}
	claims := map[string]any{}
	if err := idt.Claims(&claims); err != nil {
		return providerAccount{}, providerRefused(p.Name(), err, "its ID token could not be read.")
	}
	if err := p.addUserInfo(ctx, dp, tok, idt.Subject, claims); err != nil {
		return providerAccount{}, err
	}
	acct, err := accountFromClaims(claims, p.cfg.AdminClaim, p.cfg.AdminValues)
	if err != nil {
		return providerAccount{}, providerRefused(p.Name(), err, err.Error()+".")
	}
	acct.Issuer = idt.Issuer
	return acct, nil
}

// addUserInfo adds the claims of the userinfo endpoint (when the provider
// has one) that the ID token lacks: many providers put the e-mail and
// groups only there.
func (p *oidcProvider) addUserInfo(ctx context.Context, dp *oidc.Provider, tok *oauth2.Token, subject string, claims map[string]any) error {
	if dp.UserInfoEndpoint() == "" {
		return nil
	}
	info, err := dp.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil {
		return providerDown(p.Name(), fmt.Errorf("userinfo: %w", err))
	}
	if info.Subject != subject {
		return providerRefused(p.Name(), errors.New("userinfo subject differs from the ID token's"), "its user information is about someone else.")
	}
	more := map[string]any{}
	if err := info.Claims(&more); err != nil {
		return providerRefused(p.Name(), err, "its user information could not be read.")
	}
	for k, v := range more {
		if _, ok := claims[k]; !ok {
			claims[k] = v
		}
	}
	return nil
}

// Bounds of what a provider says about a person.
const (
	maxSubjectLen = 255
	maxEmailLen   = 320
)

// accountFromClaims reads a person from OpenID Connect claims: sub (required,
// at most maxSubjectLen bytes of clean text), email, email_verified (a JSON
// boolean, or the string "true" as some providers send it) and, when
// adminClaim is set, the role it maps to (claimStrings).
func accountFromClaims(claims map[string]any, adminClaim string, adminValues []string) (providerAccount, error) {
	sub, _ := claims["sub"].(string)
	if sub == "" || len(sub) > maxSubjectLen || checkText("sub", sub, maxSubjectLen) != nil {
		return providerAccount{}, errors.New("its answer names nobody usable (a missing or malformed subject)")
	}
	acct := providerAccount{Subject: sub}
	if email, ok := claims["email"].(string); ok && len(email) <= maxEmailLen && checkText("email", email, maxEmailLen) == nil {
		acct.Email = strings.TrimSpace(email)
	}
	switch v := claims["email_verified"].(type) {
	case bool:
		acct.EmailVerified = v
	case string:
		acct.EmailVerified = strings.EqualFold(v, "true")
	}
	if adminClaim != "" {
		acct.Role = hoard.RoleUser
		if slices.ContainsFunc(claimStrings(claims, adminClaim), func(v string) bool { return slices.Contains(adminValues, v) }) {
			acct.Role = hoard.RoleAdmin
		}
	}
	return acct, nil
}

// claimStrings returns the string values of a claim: a string, or the
// strings of a list. path names a top-level claim (dots and all, as in
// "https://example.com/roles"), or else a dotted path into nested objects
// ("realm_access.roles").
func claimStrings(claims map[string]any, path string) []string {
	v, ok := claims[path]
	if !ok {
		var cur any = claims
		for part := range strings.SplitSeq(path, ".") {
			m, isMap := cur.(map[string]any)
			if !isMap {
				return nil
			}
			cur = m[part]
		}
		v = cur
	}
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
