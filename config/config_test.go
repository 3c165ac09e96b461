package config

import (
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard/web"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadConfigDefaults(t *testing.T) {
	c, err := Load(env(map[string]string{"LOG_FORMAT": "text"}))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"DATA_DIR absolute ./data", strings.HasSuffix(c.DataDir, "/data") && strings.HasPrefix(c.DataDir, "/")},
		{"UPLOAD_DIR under DATA_DIR", c.UploadDir == c.DataDir+"/uploads"},
		{"LISTEN_ADDR :8080", c.ListenAddr == ":8080"},
		{"APP_URL from LISTEN_ADDR", c.AppURL == "http://localhost:8080"},
		{"interval 60m", c.WorkerInterval == time.Hour},
		{"max skip attempts 5", c.WorkerMaxSkipAttempts == 5},
		{"group window 5m", c.AutoGroupTimeWindow == 5*time.Minute},
		{"split threshold 4000 x 512 KiB", c.SplitThresholdBytes == 2097152000},
		{"log level info", c.LogLevel == slog.LevelInfo},
		{"no database URL", c.DatabaseURL == ""},
		{"search cache 60 s", c.SearchCacheTTL == time.Minute},
		{"concurrent requests: the web's default", c.MaxConcurrentRequests == 0},
		{"web statement timeout 2 s", c.WebStatementTimeout == 2*time.Second},
		{"no metrics listener", c.MetricsAddr == ""},
		{"account rate 10/s, burst 5", c.AccountRate == 10 && c.AccountBurst == 5},
		{"decode budget 128 MiB", c.DecodeMemoryBytes == 128<<20},
		{"upload quota 20 GiB", c.UploadQuotaBytes == 20<<30},
		{"upload volume keeps 5 GiB free", c.UploadMinFreeBytes == 5<<30},
		{"upload retention 7 days", c.UploadRetention == 7*24*time.Hour},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("default %s does not hold: %+v", ch.name, c)
		}
	}
}

func TestLoadConfigValues(t *testing.T) {
	c, err := Load(env(map[string]string{
		"DATA_DIR": "/srv/hoard", "LISTEN_ADDR": "127.0.0.1:9000", "NEXT_PUBLIC_APP_URL": "https://hoard.example.com/",
		"WORKER_INTERVAL_MINUTES": "15", "AUTO_GROUP_TIME_WINDOW_MINUTES": "0", "SPLIT_THRESHOLD_BYTES": "4194304000",
		"LOG_LEVEL": "DEBUG", "LOG_FORMAT": "json", "BOT_USERNAME": "@hoard_bot", "TELEGRAM_APP_ID": "123", "TELEGRAM_APP_HASH": "abc",
		"SEARCH_CACHE_SECONDS": "0", "WEB_MAX_CONCURRENT_REQUESTS": "64", "WEB_STATEMENT_TIMEOUT_SECONDS": "0",
		"METRICS_ADDR": "127.0.0.1:9090", "ACCOUNT_REQUEST_RATE": "2.5", "ACCOUNT_REQUEST_BURST": "20",
		"DECODE_MEMORY_BYTES": "67108864",
		"UPLOAD_QUOTA_BYTES":  "0", "UPLOAD_MIN_FREE_BYTES": "1048576", "UPLOAD_RETENTION_DAYS": "0",
	}))
	if err != nil {
		t.Fatal(err)
	}
	type parsed struct {
		UploadDir, AppURL, LogFormat, BotUsername, MetricsAddr      string
		WorkerInterval, AutoGroupTimeWindow                         time.Duration
		SplitThresholdBytes, DecodeMemoryBytes, UploadMinFreeBytes  int64
		LogLevel                                                    slog.Level
		TelegramAppID, MaxConcurrentRequests, AccountBurst          int
		AccountRate                                                 float64
		SearchCacheOff, StatementTimeoutOff, QuotaOff, RetentionOff bool // 0 turns them off
	}
	want := parsed{"/srv/hoard/uploads", "https://hoard.example.com", "json", "hoard_bot", "127.0.0.1:9090", 15 * time.Minute, 0,
		4194304000, 64 << 20, 1 << 20, slog.LevelDebug, 123, 64, 20, 2.5, true, true, true, true}
	got := parsed{c.UploadDir, c.AppURL, c.LogFormat, c.BotUsername, c.MetricsAddr, c.WorkerInterval, c.AutoGroupTimeWindow,
		c.SplitThresholdBytes, c.DecodeMemoryBytes, c.UploadMinFreeBytes, c.LogLevel, c.TelegramAppID, c.MaxConcurrentRequests,
		c.AccountBurst, c.AccountRate, c.SearchCacheTTL < 0, c.WebStatementTimeout < 0, c.UploadQuotaBytes < 0, c.UploadRetention < 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("config (-want +got):\n%s", diff)
	}
	c, _ = Load(env(map[string]string{"APP_URL": "https://a.example", "NEXT_PUBLIC_APP_URL": "https://b.example", "LOG_FORMAT": "text"}))
	if c.AppURL != "https://a.example" {
		t.Fatalf("APP_URL must win over NEXT_PUBLIC_APP_URL, got %s", c.AppURL)
	}
	old := BuildAppURL
	BuildAppURL = "https://baked.example"
	c, _ = Load(env(map[string]string{"LOG_FORMAT": "text"}))
	BuildAppURL = old
	if c.AppURL != "https://baked.example" {
		t.Fatalf("build-time APP_URL not used: %s", c.AppURL)
	}
}

func TestLoadConfigRejectsInvalidValuesByName(t *testing.T) {
	tests := []struct {
		name, value string
	}{
		{"WORKER_INTERVAL_MINUTES", "0"},
		{"WORKER_INTERVAL_MINUTES", "soon"},
		{"WORKER_MAX_SKIP_ATTEMPTS", "0"},
		{"WORKER_MAX_SKIP_ATTEMPTS", "101"},
		{"AUTO_GROUP_TIME_WINDOW_MINUTES", "-1"},
		{"SPLIT_THRESHOLD_BYTES", "1000"},
		{"SPLIT_THRESHOLD_BYTES", "4194304001"},
		{"DECODE_MEMORY_BYTES", "1000"},
		{"DECODE_MEMORY_BYTES", "17179869185"},
		{"LISTEN_ADDR", "8080"},
		{"LISTEN_ADDR", ":99999"},
		{"APP_URL", "ftp://x"},
		{"APP_URL", "/relative"},
		{"LOG_LEVEL", "loud"},
		{"LOG_FORMAT", "xml"},
		{"TELEGRAM_APP_ID", "x"},
		{"SEARCH_CACHE_SECONDS", "-1"},
		{"SEARCH_CACHE_SECONDS", "3601"},
		{"WEB_MAX_CONCURRENT_REQUESTS", "0"},
		{"WEB_STATEMENT_TIMEOUT_SECONDS", "-1"},
		{"WEB_STATEMENT_TIMEOUT_SECONDS", "601"},
		{"METRICS_ADDR", "9090"},
		{"METRICS_ADDR", ":metrics"},
		{"METRICS_ADDR", ":8080"},
		{"METRICS_ADDR", "0.0.0.0:8080"},
		{"OIDC_ISSUER", "http://idp.example.com"},
		{"OIDC_ISSUER", "https://idp.example.com?tenant=1"},
		{"OIDC_ISSUER", "idp.example.com"},
		{"OIDC_CLIENT_ID", "hoard"},
		{"OIDC_ADMIN_CLAIM", "groups"},
		{"GITHUB_CLIENT_ID", "id-without-secret"},
		{"GITHUB_CLIENT_SECRET", "secret-without-id"},
		{"SIGNUP_EMAIL_DOMAINS", "example.com"},
		{"ACCOUNT_REQUEST_RATE", "0"},
		{"ACCOUNT_REQUEST_RATE", "fast"},
		{"ACCOUNT_REQUEST_BURST", "0"},
		{"ACCOUNT_REQUEST_BURST", "1001"},
		{"UPLOAD_QUOTA_BYTES", "-1"},
		{"UPLOAD_QUOTA_BYTES", "20G"},
		{"UPLOAD_MIN_FREE_BYTES", "-1"},
		{"UPLOAD_RETENTION_DAYS", "3651"},
		{"UPLOAD_RETENTION_DAYS", "7d"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			_, err := Load(env(map[string]string{tt.name: tt.value, "LOG_FORMAT": map[bool]string{true: tt.value, false: "text"}[tt.name == "LOG_FORMAT"]}))
			if err == nil || !strings.Contains(err.Error(), tt.name) {
				t.Fatalf("error %v does not name %s", err, tt.name)
			}
		})
	}
	_, err := Load(env(map[string]string{"TELEGRAM_APP_HASH": "abc", "LOG_FORMAT": "text"}))
	if err == nil || !strings.Contains(err.Error(), "TELEGRAM_APP_ID") {
		t.Fatalf("hash without id: %v", err)
	}
	// Every problem is reported at once.
	_, err = Load(env(map[string]string{"LOG_LEVEL": "x", "LOG_FORMAT": "y"}))
	if err == nil || !strings.Contains(err.Error(), "LOG_LEVEL") || !strings.Contains(err.Error(), "LOG_FORMAT") {
		t.Fatalf("not every problem reported: %v", err)
	}
}

func TestLoadSignIn(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want web.SignInConfig
		bad  []string // variables the error names
	}{
		{"none", nil, web.SignInConfig{}, nil},
		{"OpenID Connect", map[string]string{"OIDC_ISSUER": "https://sso.example.com/realms/main/", "OIDC_CLIENT_ID": "hoard",
			"OIDC_CLIENT_SECRET": " s3cret ", "OIDC_DISPLAY_NAME": "Company SSO", "OIDC_SCOPES": "groups, offline_access",
			"OIDC_ADMIN_CLAIM": "realm_access.roles", "OIDC_ADMIN_VALUES": "hoard-admins, Hoard Owners"},
			web.SignInConfig{OIDC: &web.OIDCConfig{Issuer: "https://sso.example.com/realms/main/", ClientID: "hoard", ClientSecret: " s3cret ",
				DisplayName: "Company SSO", Scopes: []string{"groups", "offline_access"}, AdminClaim: "realm_access.roles",
				AdminValues: []string{"hoard-admins", "Hoard Owners"}}}, nil},
		{"a loopback issuer over http", map[string]string{"OIDC_ISSUER": "http://127.0.0.1:5556/dex", "OIDC_CLIENT_ID": "hoard"},
			web.SignInConfig{OIDC: &web.OIDCConfig{Issuer: "http://127.0.0.1:5556/dex", ClientID: "hoard"}}, nil},
		{"GitHub and domains", map[string]string{"GITHUB_CLIENT_ID": "gh", "GITHUB_CLIENT_SECRET": "ghs",
			"SIGNUP_EMAIL_DOMAINS": "Example.com, @staff.example.org"},
			web.SignInConfig{GitHub: &web.GitHubConfig{ClientID: "gh", ClientSecret: "ghs", URL: "https://github.com"},
				EmailDomains: []string{"example.com", "staff.example.org"}}, nil},
		{"GitHub Enterprise", map[string]string{"GITHUB_CLIENT_ID": "gh", "GITHUB_CLIENT_SECRET": "ghs", "GITHUB_URL": "https://git.example.com/"},
			web.SignInConfig{GitHub: &web.GitHubConfig{ClientID: "gh", ClientSecret: "ghs", URL: "https://git.example.com"}}, nil},
		{"bad values", map[string]string{"OIDC_ISSUER": "https://sso.example.com", "OIDC_CLIENT_ID": "hoard",
			"OIDC_DISPLAY_NAME": strings.Repeat("n", 65), "OIDC_ADMIN_VALUES": "admins", "GITHUB_CLIENT_ID": "gh", "GITHUB_CLIENT_SECRET": "ghs",
			"GITHUB_URL": "ftp://git.example.com", "SIGNUP_EMAIL_DOMAINS": "localhost"},
			web.SignInConfig{}, []string{"OIDC_DISPLAY_NAME", "OIDC_ADMIN_CLAIM", "GITHUB_URL", "SIGNUP_EMAIL_DOMAINS"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"LOG_FORMAT": "text"}
			maps.Copy(env, tc.env)
			c, err := Load(func(k string) string { return env[k] })
			for _, name := range tc.bad {
				if err == nil || !strings.Contains(err.Error(), name) {
					t.Errorf("error %v does not name %s", err, name)
				}
			}
			if tc.bad != nil {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.SignIn, tc.want) {
				t.Fatalf("SignIn = %s\nwant     %s", describeSignIn(c.SignIn), describeSignIn(tc.want))
			}
		})
	}
}

func describeSignIn(sc web.SignInConfig) string {
	return fmt.Sprintf("OIDC %+v GitHub %+v domains %q", sc.OIDC, sc.GitHub, sc.EmailDomains)
}

func TestCheckAuthSecret(t *testing.T) {
	for secret, ok := range map[string]bool{"": false, "short": false, strings.Repeat("x", 31): false, strings.Repeat("x", 32): true} {
		err := Config{AuthSecret: secret}.CheckAuthSecret()
		if (err == nil) != ok || (err != nil && !strings.Contains(err.Error(), "AUTH_SECRET")) {
			t.Errorf("AUTH_SECRET of %d bytes: %v", len(secret), err)
		}
	}
}

// TestReadmeDocumentsEveryVariable keeps README's configuration table and
// the code in step: the table is Markdown(), generated from Vars
// (UPDATE_README=1 writes it), and it has a row for every variable Vars
// declares and for no other.
func TestReadmeDocumentsEveryVariable(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	start := strings.Index(s, "<!-- config:start")
	end := strings.Index(s, "<!-- config:end -->")
	if start < 0 || end < start {
		t.Fatal("README.md lacks the config:start/config:end markers")
	}
	start += strings.Index(s[start:], "-->") + len("-->\n")
	if os.Getenv("UPDATE_README") == "1" {
		s = s[:start] + Markdown() + s[end:]
		if err := os.WriteFile("../README.md", []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		end = start + len(Markdown())
	}
	if got := s[start:end]; got != Markdown() {
		t.Errorf("README.md's configuration table is not the one Vars makes; regenerate it: UPDATE_README=1 go test ./config -run Readme")
	}
	rows := regexp.MustCompile("(?m)^\\| `([A-Z_]+)` \\|").FindAllStringSubmatch(s, -1)
	documented := map[string]bool{}
	for _, r := range rows {
		documented[r[1]] = true
	}
	for _, v := range Vars {
		if !documented[v.Name] {
			t.Errorf("README.md has no configuration row for %s", v.Name)
		}
		delete(documented, v.Name)
	}
	for name := range documented {
		t.Errorf("README.md documents %s, which hoard does not read", name)
	}
}

// TestLoadReadsEveryDeclaredVariable: Load asks for every variable of Vars
// and its aliases (a variable it reads without declaring panics), with the
// sign-in group set so that all of its variables are read.
func TestLoadReadsEveryDeclaredVariable(t *testing.T) {
	set := map[string]string{"LOG_FORMAT": "text", "OIDC_ISSUER": "https://sso.example.com", "OIDC_CLIENT_ID": "hoard",
		"GITHUB_CLIENT_ID": "gh", "GITHUB_CLIENT_SECRET": "ghs"}
	asked := map[string]bool{}
	if _, err := Load(func(k string) string { asked[k] = true; return set[k] }); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, v := range Vars {
		names[v.Name] = true
		for _, a := range append([]string{v.Name}, v.Aliases...) {
			if !asked[a] {
				t.Errorf("Load never reads %s", a)
			}
		}
	}
	if len(names) != len(Vars) {
		t.Errorf("Vars declares a variable twice")
	}
}

// TestDocsStateTheRanges: the description of every number says the range
// its validation allows (as plain numbers or in binary units), so that
// README cannot promise another.
func TestDocsStateTheRanges(t *testing.T) {
	forms := func(f float64) []string {
		out := []string{strconv.FormatFloat(f, 'f', -1, 64)}
		for _, u := range []struct {
			name string
			size float64
		}{{"PiB", 1 << 50}, {"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}} {
			if f >= u.size && math.Mod(f, u.size) == 0 {
				out = append(out, strconv.FormatFloat(f/u.size, 'g', -1, 64)+" "+u.name)
				break
			}
		}
		return out
	}
	for _, v := range Vars {
		if !v.Ranged || v.Name == "TELEGRAM_APP_ID" { // an API id is any 31-bit number: nothing to tell
			continue
		}
		found := false
		for _, lo := range forms(v.Min) {
			for _, hi := range forms(v.Max) {
				found = found || strings.Contains(v.Doc, lo+"–"+hi)
			}
		}
		if !found {
			t.Errorf("%s: the description does not state the range %v–%v: %s", v.Name, forms(v.Min), forms(v.Max), v.Doc)
		}
	}
}
