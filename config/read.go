package config

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hoard/hoard/web"
)

// readListenAddr takes LISTEN_ADDR: host:port with a port number.
func readListenAddr(l *loader, v string) {
	l.c.ListenAddr = v
	if _, port, err := net.SplitHostPort(v); err != nil {
		l.bad("LISTEN_ADDR", "%q is not host:port (for example :8080 or 127.0.0.1:8080)", v)
	} else if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		l.bad("LISTEN_ADDR", "port %q is not a number 0–65535", port)
	}
}

// readMetricsAddr takes METRICS_ADDR: unset, or host:port apart from the
// web's LISTEN_ADDR.
func readMetricsAddr(l *loader, v string) {
	if l.c.MetricsAddr = v; v == "" {
		return
	}
	host, port, _ := net.SplitHostPort(l.c.ListenAddr)
	if mh, mp, err := net.SplitHostPort(v); err != nil {
		l.bad("METRICS_ADDR", "%q is not host:port (for example 127.0.0.1:9090)", v)
	} else if p, err := strconv.Atoi(mp); err != nil || p < 0 || p > 65535 {
		l.bad("METRICS_ADDR", "port %q is not a number 0–65535", mp)
	} else if mp != "0" && mp == port && (mh == host || mh == "" || host == "") {
		l.bad("METRICS_ADDR", "%q is the web's LISTEN_ADDR: metrics need a listener of their own", v)
	}
}

// readAppURL takes APP_URL, else NEXT_PUBLIC_APP_URL, else BuildAppURL,
// else the web's own address: an absolute http(s) URL, kept without a
// trailing slash.
func readAppURL(l *loader, v string) {
	if v == "" {
		v = l.str("NEXT_PUBLIC_APP_URL", BuildAppURL)
	}
	if v == "" {
		host, port, _ := net.SplitHostPort(l.c.ListenAddr)
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "localhost"
		}
		v = "http://" + net.JoinHostPort(host, port)
	}
	if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		l.bad("APP_URL", "%q is not an absolute http(s) URL", v)
	}
	l.c.AppURL = strings.TrimRight(v, "/")
}

// abs is a directory variable's absolute path (the value as it is when it
// has none).
func (l *loader) abs(name, dir string) string {
	a, err := filepath.Abs(dir)
	if err != nil {
		l.bad(name, "%v", err)
		return dir
	}
	return a
}

// offIfZero turns a variable's 0 ("none", "at once") into the -1 that
// its consumer reads so; their 0 is their default.
func offIfZero[T int64 | time.Duration](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// defaultWorkerID is the host name, made a valid River client id.
func defaultWorkerID() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "hoard-worker"
	}
	return h
}

// defaultLogFormat is text on a terminal, JSON otherwise.
func defaultLogFormat() string {
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return "text"
	}
	return "json"
}

// signIn reads the identity providers' group of variables (OIDC_*,
// GITHUB_*, SIGNUP_EMAIL_DOMAINS), which are valid only together.
func (l *loader) signIn() web.SignInConfig {
	var sc web.SignInConfig
	sc.OIDC = l.oidc()
	if id, secret := l.str("GITHUB_CLIENT_ID", ""), l.raw("GITHUB_CLIENT_SECRET"); id != "" || secret != "" {
		if id == "" || secret == "" {
			l.bad("GITHUB_CLIENT_ID", "GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET must be set together")
		}
		gh := &web.GitHubConfig{ClientID: id, ClientSecret: secret, URL: strings.TrimRight(l.str("GITHUB_URL", defaultGitHubURL), "/")}
		if !secureURL(gh.URL) {
			l.bad("GITHUB_URL", "%q is not an absolute https URL (http only on a loopback host) without query or fragment", gh.URL)
		}
		sc.GitHub = gh
	}
	for _, d := range splitList(strings.ToLower(l.str("SIGNUP_EMAIL_DOMAINS", "")), ",") {
		d = strings.TrimPrefix(d, "@")
		if !domainName.MatchString(d) {
			l.bad("SIGNUP_EMAIL_DOMAINS", "%q is not a domain name", d)
		}
		sc.EmailDomains = append(sc.EmailDomains, d)
	}
	if len(sc.EmailDomains) > 0 && sc.OIDC == nil && sc.GitHub == nil {
		l.bad("SIGNUP_EMAIL_DOMAINS", "needs an identity provider (OIDC_ISSUER or GITHUB_CLIENT_ID)")
	}
	return sc
}

// oidc reads the OpenID Connect provider's variables (nil: none).
func (l *loader) oidc() *web.OIDCConfig {
	issuer, id := l.str("OIDC_ISSUER", ""), l.str("OIDC_CLIENT_ID", "")
	if issuer == "" && id == "" {
		if l.str("OIDC_ADMIN_CLAIM", "") != "" || l.str("OIDC_ADMIN_VALUES", "") != "" {
			l.bad("OIDC_ADMIN_CLAIM", "needs OIDC_ISSUER and OIDC_CLIENT_ID")
		}
		return nil
	}
	o := &web.OIDCConfig{Issuer: issuer, ClientID: id, ClientSecret: l.raw("OIDC_CLIENT_SECRET"),
		DisplayName: l.str("OIDC_DISPLAY_NAME", ""), Scopes: splitList(l.str("OIDC_SCOPES", ""), " ,"),
		AdminClaim: l.str("OIDC_ADMIN_CLAIM", ""), AdminValues: splitList(l.str("OIDC_ADMIN_VALUES", ""), ",")}
	switch {
	case issuer == "":
		l.bad("OIDC_ISSUER", "is required when OIDC_CLIENT_ID is set")
	case id == "":
		l.bad("OIDC_CLIENT_ID", "is required when OIDC_ISSUER is set")
	}
	if issuer != "" && !secureURL(issuer) {
		l.bad("OIDC_ISSUER", "%q is not an absolute https URL (http only on a loopback host) without query or fragment", issuer)
	}
	if len([]rune(o.DisplayName)) > 64 {
		l.bad("OIDC_DISPLAY_NAME", "is longer than 64 characters")
	}
	if (o.AdminClaim == "") != (len(o.AdminValues) == 0) {
		l.bad("OIDC_ADMIN_CLAIM", "OIDC_ADMIN_CLAIM and OIDC_ADMIN_VALUES must be set together")
	}
	return o
}

// domainName is a DNS name with at least two labels.
var domainName = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// splitList splits a list of values separated by any of seps, trimmed,
// dropping empty ones.
func splitList(v, seps string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(seps, r) }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// secureURL reports whether raw is an absolute https URL, or http on a
// loopback host, without query or fragment: a provider's address, where
// tokens travel.
func secureURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return false
	}
	h := u.Hostname()
	loopback := h == "localhost" || net.ParseIP(h).IsLoopback()
	return u.Scheme == "https" || (u.Scheme == "http" && loopback)
}

// Markdown is README's configuration table: a row per variable of Vars,
// with its default and description.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| Variable | Default | Meaning |\n|---|---|---|\n")
	for _, v := range Vars {
		b.WriteString("| `" + v.Name + "` | " + v.Default + " | " + v.Doc + " |\n")
	}
	return b.String()
}
