package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/oauth2"
)

// githubKey is GitHub's provider key.
const githubKey = "github"

// GitHubConfig is a GitHub OAuth app (GITHUB_* variables).
type GitHubConfig struct {
	ClientID     string
	ClientSecret string
	// URL is GitHub's web address: https://github.com (when empty) or a
	// GitHub Enterprise server. APIURL is its REST API: https://api.github.com
	// for github.com, URL + "/api/v3" for a server (when empty).
	URL    string
	APIURL string
}

// githubProvider signs in with GitHub: OAuth 2 with PKCE, then the REST
// API's /user (the stable numeric id) and /user/emails (which addresses
// GitHub has verified).
type githubProvider struct {
	cfg    GitHubConfig
	client *http.Client
	oauth  *oauth2.Config
}

// githubScopes are what hoard asks GitHub for: the profile and the e-mail
// addresses with their verification.
var githubScopes = []string{"read:user", "user:email"}

func newGitHubProvider(cfg GitHubConfig, client *http.Client, redirectURL string) (*githubProvider, error) {
	if cfg.URL == "" {
		cfg.URL = "https://github.com"
	}
	cfg.URL = strings.TrimRight(cfg.URL, "/")
	if u, err := url.Parse(cfg.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("web: GitHub URL %q is not an absolute http(s) URL", cfg.URL)
	}
	if cfg.APIURL == "" {
		cfg.APIURL = cfg.URL + "/api/v3"
		if cfg.URL == "https://github.com" {
			cfg.APIURL = "https://api.github.com"
		}
	}
	cfg.APIURL = strings.TrimRight(cfg.APIURL, "/")
	if cfg.ClientID == "" {
		return nil, errors.New("web: GitHub client id is empty")
	}
	return &githubProvider{cfg: cfg, client: client, oauth: &oauth2.Config{
		ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, RedirectURL: redirectURL, Scopes: githubScopes,
		Endpoint: oauth2.Endpoint{AuthURL: cfg.URL + "/login/oauth/authorize", TokenURL: cfg.URL + "/login/oauth/access_token",
			AuthStyle: oauth2.AuthStyleInParams},
	}}, nil
}

// Key is "github".
func (p *githubProvider) Key() string { return githubKey }

// Name is "GitHub".
func (p *githubProvider) Name() string { return "GitHub" }

// authURLs is GitHub's authorization page.
func (p *githubProvider) authURLs() []string { return []string{p.oauth.Endpoint.AuthURL} }

// authCodeURL ignores the nonce: GitHub issues no ID token to carry it.
func (p *githubProvider) authCodeURL(_ context.Context, state, _, verifier string) (string, error) {
	return p.oauth.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)), nil
}

func (p *githubProvider) identify(ctx context.Context, code, verifier, _ string) (providerAccount, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, p.client)
	tok, err := p.oauth.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		return providerAccount{}, exchangeError(p.Name(), err)
	}
	body, err := p.get(ctx, tok, "/user")
	if err != nil {
		return providerAccount{}, err
	}
	user, err := parseGitHubUser(body)
	if err != nil {
		return providerAccount{}, providerRefused(p.Name(), err, "its answer about you could not be read.")
	}
	body, err = p.get(ctx, tok, "/user/emails")
	if err != nil {
		return providerAccount{}, err
	}
	emails, err := parseGitHubEmails(body)
	if err != nil {
		return providerAccount{}, providerRefused(p.Name(), err, "its list of your e-mail addresses could not be read.")
	}
	acct := providerAccount{Issuer: p.cfg.URL, Subject: strconv.FormatInt(user.ID, 10)}
	acct.Email, acct.EmailVerified = chooseGitHubEmail(user, emails)
	return acct, nil
}

// maxGitHubAnswer bounds what hoard reads of one API answer.
const maxGitHubAnswer = 1 << 20

// get reads one REST API resource with the user's token.
func (p *githubProvider) get(ctx context.Context, tok *oauth2.Token, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.cfg.APIURL+path, nil)
	if err != nil {
		return nil, fmt.Errorf("github %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	tok.SetAuthHeader(req)
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, providerDown(p.Name(), fmt.Errorf("github %s: %w", path, err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxGitHubAnswer))
	switch {
	case err != nil:
		return nil, providerDown(p.Name(), fmt.Errorf("github %s: %w", path, err))
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, providerRefused(p.Name(), fmt.Errorf("github %s: %s", path, resp.Status), "it refused to tell hoard who you are.")
	case resp.StatusCode != http.StatusOK:
		return nil, providerDown(p.Name(), fmt.Errorf("github %s: %s", path, resp.Status))
	}
	return body, nil
}

// githubUser is what hoard reads of GET /user.
type githubUser struct {
	ID    int64  `json:"id"`
	Login string `json:"login"`
	Email string `json:"email"` // the public profile address, unverified
}

// githubEmail is one address of GET /user/emails.
type githubEmail struct {
	Email    string `json:"email"`
	Primary  bool   `json:"primary"`
	Verified bool   `json:"verified"`
}

// parseGitHubUser reads GET /user's answer: a positive numeric id is
// required.
func parseGitHubUser(body []byte) (githubUser, error) {
	var u githubUser
	if err := json.Unmarshal(body, &u); err != nil {
		return githubUser{}, fmt.Errorf("github user: %w", err)
	}
	if u.ID <= 0 {
		return githubUser{}, errors.New("github user: no id")
	}
	return u, nil
}

// parseGitHubEmails reads GET /user/emails's answer, keeping the addresses
// that are clean text of at most maxEmailLen bytes.
func parseGitHubEmails(body []byte) ([]githubEmail, error) {
	var all []githubEmail
	if err := json.Unmarshal(body, &all); err != nil {
		return nil, fmt.Errorf("github emails: %w", err)
	}
	out := all[:0]
	for _, e := range all {
		if e.Email != "" && checkText("email", e.Email, maxEmailLen) == nil {
			out = append(out, e)
		}
	}
	return out, nil
}

// chooseGitHubEmail picks the address hoard knows a GitHub user by: the
// primary one when GitHub verified it, else the first verified one, else
// the primary (or public) one, unverified.
func chooseGitHubEmail(u githubUser, emails []githubEmail) (email string, verified bool) {
	for _, e := range emails {
		if e.Primary && e.Verified {
			return e.Email, true
		}
	}
	for _, e := range emails {
		if e.Verified {
			return e.Email, true
		}
	}
	for _, e := range emails {
		if e.Primary {
			return e.Email, false
		}
	}
	if checkText("email", u.Email, maxEmailLen) == nil {
		return u.Email, false
	}
	return "", false
}
