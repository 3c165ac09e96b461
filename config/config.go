// Package config is hoard's configuration: one table of environment
// variables (Vars), each with its name, default, validation and
// description. Load reads a Config through that table and nothing else;
// README's configuration table is generated from it (Markdown), and a test
// keeps the two in step, so the code and the documentation cannot drift.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/web"
)

// BuildAppURL is APP_URL's default when neither APP_URL nor
// NEXT_PUBLIC_APP_URL is set (cmd/hoard sets it from a value baked in at
// build time); "" derives it from LISTEN_ADDR.
var BuildAppURL = ""

// Config is hoard's whole configuration, read once from the environment.
type Config struct {
	DatabaseURL           string // "" = embedded PostgreSQL under DataDir/pg
	DataDir               string
	UploadDir             string
	ListenAddr            string
	MetricsAddr           string // "" = no metrics listener
	AuthSecret            string
	AppURL                string
	TelegramAppID         int
	TelegramAppHash       string
	TelegramEmulator      string  // emulator info file; "" = the real platform
	AccountRate           float64 // requests per second of one messenger account, across every worker process
	AccountBurst          int
	BotToken              string
	BotUsername           string
	BotLimits             messenger.BotLimits // the pace of the bot's messages
	BotSendTimeout        time.Duration       // an unconfirmed send is sent again (same random id) after this
	WorkerInterval        time.Duration
	WorkerMaxSkipAttempts int
	WorkerSettle          time.Duration // a set whose newest part is younger waits
	DownloadStall         time.Duration // a download chunk without progress this long is retried
	WorkerID              string        // River client id; unique per worker process
	SessionLease          time.Duration // a dead process's messaging sessions stay reserved this long
	AutoGroupTimeWindow   time.Duration
	SplitThresholdBytes   int64
	LogLevel              slog.Level
	LogFormat             string // "json" or "text"
	UsersCanCurate        bool
	UploadMaxBytes        int64
	DecodeMemoryBytes     int64   // image decodes in flight hold at most this much at once (archive.SetDecodeBudget)
	UploadQuotaBytes      int64   // per user; negative: none
	DownloadCacheBytes    int64   // on-disk cache of served chunks; 0: none
	DownloadRate          float64 // platform requests per second for downloads, across processes
	DownloadsPerUser      int
	UploadMinFreeBytes    int64         // kept free on the upload and spool volumes; negative: none
	UploadRetention       time.Duration // published files are kept this long; negative: until the next clean-up
	SearchCacheTTL        time.Duration // negative: no search cache
	MaxConcurrentRequests int           // 0: 2 per CPU
	WebStatementTimeout   time.Duration // negative: none
	AdminEmail            string        // with AdminPassword: ensure this administrator exists at start-up
	AdminPassword         string
	SignIn                web.SignInConfig // identity providers (OIDC_*, GITHUB_*, SIGNUP_EMAIL_DOMAINS)
}

// Load reads the configuration from getenv through Vars, in their order
// (a variable's validation may look at those before it), and reports every
// invalid variable at once, each by name (errors.Join). It asks getenv only
// for the variables of Vars and their aliases.
func Load(getenv func(string) string) (Config, error) {
	l := &loader{getenv: getenv, declared: map[string]bool{}}
	for _, v := range Vars {
		l.declared[v.Name] = true
		for _, a := range v.Aliases {
			l.declared[a] = true
		}
	}
	for _, v := range Vars {
		if v.read != nil {
			v.read(l)
		}
	}
	l.c.SignIn = l.signIn()
	return l.c, errors.Join(l.errs...)
}

// loader is one Load: the Config it fills and the problems it found.
type loader struct {
	getenv   func(string) string
	declared map[string]bool
	c        Config
	errs     []error
}

// bad records a problem with a variable.
func (l *loader) bad(name, format string, args ...any) {
	l.errs = append(l.errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
}

// raw is a variable's value as set. Reading a variable Vars does not
// declare is a bug in this package: it panics, so every test of Load finds
// it.
func (l *loader) raw(name string) string {
	if !l.declared[name] {
		panic("config: " + name + " is read but not declared in Vars")
	}
	return l.getenv(name)
}

// str is a variable's trimmed value, or def when it is unset or blank.
func (l *loader) str(name, def string) string {
	if v := strings.TrimSpace(l.raw(name)); v != "" {
		return v
	}
	return def
}

// MinAuthSecret is the shortest AUTH_SECRET the web part accepts.
const MinAuthSecret = 32

// CheckAuthSecret refuses a missing or short AUTH_SECRET (SPEC
// Authentication 4).
func (c Config) CheckAuthSecret() error {
	switch {
	case c.AuthSecret == "":
		return errors.New("AUTH_SECRET is not set: the web application refuses to start without it (generate one with `openssl rand -base64 48`)")
	case len(c.AuthSecret) < MinAuthSecret:
		return fmt.Errorf("AUTH_SECRET is %d bytes long: it must be at least %d bytes", len(c.AuthSecret), MinAuthSecret)
	}
	return nil
}

// NewLogger builds the process logger from the configuration, writing to
// standard error.
func (c Config) NewLogger() *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}
