package main

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/web"
)

// defaultAppURL may be baked in at build time:
// go build -ldflags "-X main.defaultAppURL=https://hoard.example.com".
var defaultAppURL = ""

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

// envVar documents one configuration variable; README's table is checked
// against this list by a test.
type envVar struct {
	Name        string
	Default     string
	Description string
}

// envVars lists every variable hoard reads, in README order.
var envVars = []envVar{
	{"DATABASE_URL", "(embedded)", "PostgreSQL connection string. Unset: hoard runs its own PostgreSQL server from the machine's installation in `$DATA_DIR/pg`."},
	{"DATA_DIR", "`./data`", "Where hoard keeps its state: embedded database, spool of downloads in flight, uploads. Compose uses `/data`."},
	{"UPLOAD_DIR", "`$DATA_DIR/uploads`", "Manual uploads; shared by web and worker."},
	{"UPLOAD_MAX_BYTES", "`8589934592`", "Largest file a manual upload accepts (8 GiB; range 1 MiB–1 TiB). Files stream to disk, never into memory."},
	{"DECODE_MEMORY_BYTES", "`134217728`", "Memory that the images being decoded into previews may take at once in a process (128 MiB; range 16 MiB–16 GiB), counted from each image's header before it is decoded (width × height × bytes per pixel): more images wait their turn, one larger than the whole budget is decoded alone. Previews are refused over 24 megapixels either way."},
	{"UPLOAD_QUOTA_BYTES", "`21474836480`", "What one user's uploads may hold on the upload volume (20 GiB): files kept there plus uploads streaming in. An upload that would pass it is refused with 413 and a message saying how much is left — before a byte is stored when its length is known, else as soon as it passes — and leaves nothing behind. Administrators have no quota. `0` turns it off (0–1 PiB)."},
	{"UPLOAD_MIN_FREE_BYTES", "`5368709120`", "Free space kept on the volumes of `UPLOAD_DIR` and of the spool (`$DATA_DIR/spool`; 5 GiB): uploads are refused (507) while less is free, and a download that would leave less waits (its job snoozes, no attempt spent) with a `DISK_LOW` notification. `0`: only what fits (0–1 TiB)."},
	{"UPLOAD_RETENTION_DAYS", "`7`", "Days a published (and verified) manual upload file is kept in `UPLOAD_DIR` before the hourly clean-up removes it; a file already in the catalog is removed at once, a failed one is kept until its upload is retried or deleted. `0`: removed at the first clean-up after publication (0–3650)."},
	{"LISTEN_ADDR", "`:8080`", "Address of the web listener (`/healthz`, `/readyz`, the application)."},
	{"METRICS_ADDR", "(off)", "Address of a listener of its own serving Prometheus metrics at `/metrics` (for example `127.0.0.1:9090`; see Monitoring). Never the web's port: keep it off the public network."},
	{"AUTH_SECRET", "(none)", "At least 32 bytes; signs sessions and encrypts stored messenger sessions and the login codes and passwords in flight to the worker (changing it loses both). Required by `web`, `worker` and `serve`; `demo` generates one into `$DATA_DIR`."},
	{"APP_URL", "`http://localhost:<port>`", "Public base URL for links and redirects. `NEXT_PUBLIC_APP_URL` is accepted too; may be baked in with `-ldflags -X main.defaultAppURL=…`."},
	{"TELEGRAM_APP_ID", "(none)", "Messenger API id of the worker's client application."},
	{"TELEGRAM_APP_HASH", "(none)", "Messenger API hash; never logged."},
	{"TELEGRAM_EMULATOR", "(none)", "Path of the info file written by `hoard emulator`; when set, clients talk to the emulator instead of the platform."},
	{"ACCOUNT_REQUEST_RATE", "`10`", "Requests per second one messenger account makes, across every worker process on the database (see [More worker processes](#more-worker-processes); 0.01–100000)."},
	{"ACCOUNT_REQUEST_BURST", "`5`", "Requests one messenger account may make at once before `ACCOUNT_REQUEST_RATE` applies (1–1000)."},
	{"BOT_TOKEN", "(none)", "Token the chat bot signs in with; never logged."},
	{"BOT_USERNAME", "(none)", "The bot's username, for `t.me` deep links. Unset: the name the running bot reports."},
	{"BOT_CHAT_RATE", "`1`", "Messages per second the bot sends to one chat, after a burst of `BOT_CHAT_BURST` (the platform's limit is about 1; 0.01–1000)."},
	{"BOT_CHAT_BURST", "`3`", "Messages the bot may send to one chat at once before `BOT_CHAT_RATE` applies (1–100)."},
	{"BOT_SEND_TIMEOUT_SECONDS", "`30`", "How long the bot waits for the platform to confirm a message before sending it again; the repeat carries the same random id, so nothing arrives twice (1–600)."},
	{"BOT_GLOBAL_RATE", "`30`", "Messages per second the bot sends in all, across every bot process (the platform's limit is about 30; 0.01–100000)."},
	{"DOWNLOAD_CACHE_BYTES", "`2147483648`", "Recently served chunks of downloads kept on disk in `$DATA_DIR/download-cache` (2 GiB), least recently used first out: a second download of the same file asks the platform nothing. `0` keeps none (0–1 PiB)."},
	{"DOWNLOAD_REQUEST_RATE", "`20`", "Platform requests per second that browser and WebDAV downloads make in all, across every web process (each fetches 1 MiB); they go through the bot's session of the web process, never an account's, so ingestion keeps its own budget (0.01–100000)."},
	{"DOWNLOADS_PER_USER", "`3`", "Downloads one user may run at once; another is answered 429 until one ends (1–100)."},
	{"WORKER_INTERVAL_MINUTES", "`60`", "Minutes between scheduled ingestion cycles (1–10080), which run on the interval's multiples of UTC time (60: every hour on the hour), so the worker panel's countdown is the real time of the next one. On an install where no cycle ever ran, the worker starts one as it starts."},
	{"WORKER_MAX_SKIP_ATTEMPTS", "`5`", "Attempts per failing source message before it stays skipped (1–100): the second 30 s after the first, each later one a `WORKER_INTERVAL_MINUTES` after the one before (see [Failures and retries](#failures-and-retries))."},
	{"WORKER_SETTLE_MINUTES", "`10`", "A multi-part set whose newest part is younger than this is left for a later cycle, so sets posted over several minutes are taken whole (0–1440)."},
	{"DOWNLOAD_STALL_SECONDS", "`30`", "A download that makes no progress for this long is resumed from where it stopped (at most 5 times per attempt; 1–3600)."},
	{"WORKER_ID", "the host name", "Name of this worker process in River UI; give each worker process on one host its own. Jobs a stopped worker left running are resumed when it starts again."},
	{"SESSION_LEASE_SECONDS", "`20`", "A messaging session (auth key) is used by one process at a time, which renews its lease in PostgreSQL; when that process dies, another may take the session this long after its last renewal (see [Running against the real platform](#running-against-the-real-platform); 3–600)."},
	{"AUTO_GROUP_TIME_WINDOW_MINUTES", "`5`", "Window of the time-based grouping pass; `0` disables it (0–1440)."},
	{"SPLIT_THRESHOLD_BYTES", "`2097152000`", "Files above this are split (4000 × 512 KiB, the non-premium limit). Premium accounts use 4194304000. Range 1 MiB–4194304000."},
	{"SEARCH_CACHE_SECONDS", "`60`", "How long the web may answer a catalog search from memory (0 turns the cache off; 0–3600). Any change to the catalog, by any process, drops the cached results at once (`catalog_changed`); this bounds only what a lost notification could leave behind."},
	{"WEB_MAX_CONCURRENT_REQUESTS", "2 per CPU", "Requests the web serves at once; the others wait their turn in arrival order (uploads, health checks and static files never wait). Raise it when the database is remote and requests mostly wait on it (1–10000)."},
	{"WEB_STATEMENT_TIMEOUT_SECONDS", "`2`", "PostgreSQL cancels a web request's statement that runs longer, and the request answers 503; no request can hold the database for long. The worker's jobs are never bounded by it (0 turns it off; 0–600)."},
	{"USERS_CAN_CURATE", "`false`", "`true` lets every signed-in user edit the catalog (tags, creators, groups, previews); otherwise only administrators."},
	{"HOARD_ADMIN_EMAIL", "(none)", "With `HOARD_ADMIN_PASSWORD`: make sure this administrator exists at start-up (automated setups). An existing user is promoted; its password is kept."},
	{"HOARD_ADMIN_PASSWORD", "(none)", "Password for a new `HOARD_ADMIN_EMAIL` administrator (at least 10 characters); never logged."},
	{"OIDC_ISSUER", "(none)", "Issuer URL of an OpenID Connect provider, exactly as it names itself (trailing slash included): with `OIDC_CLIENT_ID` the sign-in page offers it (see [Sign-in with an identity provider](#sign-in-with-an-identity-provider)). https, or http on a loopback host."},
	{"OIDC_CLIENT_ID", "(none)", "Client id of hoard at the OpenID Connect provider."},
	{"OIDC_CLIENT_SECRET", "(none)", "Client secret of hoard at the OpenID Connect provider (empty for a public client); never logged."},
	{"OIDC_DISPLAY_NAME", "the issuer's host", "What the button calls the provider: \"Sign in with …\" (at most 64 characters)."},
	{"OIDC_SCOPES", "(none)", "Scopes to ask for besides `openid email profile`, separated by spaces or commas (e.g. `groups` for a role claim)."},
	{"OIDC_ADMIN_CLAIM", "(none)", "With `OIDC_ADMIN_VALUES`: the claim (a dotted path such as `realm_access.roles` reaches into nested objects) that decides the role at every sign-in through the provider: ADMIN when it holds one of the values, USER otherwise (the last administrator keeps the role). Unset: the provider never changes a role, and its new accounts are USERs."},
	{"OIDC_ADMIN_VALUES", "(none)", "Comma-separated values of `OIDC_ADMIN_CLAIM` that make an administrator (e.g. `hoard-admins`)."},
	{"GITHUB_CLIENT_ID", "(none)", "Client id of a GitHub OAuth app: with `GITHUB_CLIENT_SECRET` the sign-in page offers GitHub."},
	{"GITHUB_CLIENT_SECRET", "(none)", "Client secret of the GitHub OAuth app; never logged."},
	{"GITHUB_URL", "`https://github.com`", "A GitHub Enterprise server instead (its API at `/api/v3`)."},
	{"SIGNUP_EMAIL_DOMAINS", "(none)", "Comma-separated e-mail domains (e.g. `example.com`): a person whose provider has verified an address in one of them gets an account at the first sign-in through the provider without an invite code. Registration with a password always needs one."},
	{"LOG_LEVEL", "`info`", "`debug`, `info`, `warn` or `error`."},
	{"LOG_FORMAT", "`text` on a terminal, else `json`", "`json` or `text`."},
}

// Limits of SPLIT_THRESHOLD_BYTES.
const (
	minSplitThreshold     = 1 << 20
	maxSplitThreshold     = 8000 * 512 * 1024 // premium accounts
	defaultSplitThreshold = 4000 * 512 * 1024
)

// loadConfig reads the configuration from getenv and reports every invalid
// variable at once, each by name.
func loadConfig(getenv func(string) string) (Config, error) {
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
	}
	str := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	decimal := func(name string, def, lo, hi float64) float64 {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return def
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) {
			bad(name, "%q is not a number", v)
			return def
		}
		if f < lo || f > hi {
			bad(name, "%g is out of range %g–%g", f, lo, hi)
			return def
		}
		return f
	}
	integer := func(name string, def, lo, hi int64) int64 {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return def
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			bad(name, "%q is not a whole number", v)
			return def
		}
		if n < lo || n > hi {
			bad(name, "%d is out of range %d–%d", n, lo, hi)
			return def
		}
		return n
	}

	c := Config{
		DatabaseURL:           str("DATABASE_URL", ""),
		DataDir:               str("DATA_DIR", "./data"),
		ListenAddr:            str("LISTEN_ADDR", ":8080"),
		MetricsAddr:           str("METRICS_ADDR", ""),
		AuthSecret:            getenv("AUTH_SECRET"),
		TelegramAppHash:       str("TELEGRAM_APP_HASH", ""),
		TelegramEmulator:      str("TELEGRAM_EMULATOR", ""),
		BotToken:              str("BOT_TOKEN", ""),
		BotUsername:           strings.TrimPrefix(str("BOT_USERNAME", ""), "@"),
		WorkerInterval:        time.Duration(integer("WORKER_INTERVAL_MINUTES", 60, 1, 7*24*60)) * time.Minute,
		WorkerMaxSkipAttempts: int(integer("WORKER_MAX_SKIP_ATTEMPTS", 5, 1, 100)),
		WorkerSettle:          time.Duration(integer("WORKER_SETTLE_MINUTES", 10, 0, 24*60)) * time.Minute,
		DownloadStall:         time.Duration(integer("DOWNLOAD_STALL_SECONDS", 30, 1, 3600)) * time.Second,
		WorkerID:              str("WORKER_ID", defaultWorkerID()),
		SessionLease:          time.Duration(integer("SESSION_LEASE_SECONDS", 20, 3, 600)) * time.Second,
		AutoGroupTimeWindow:   time.Duration(integer("AUTO_GROUP_TIME_WINDOW_MINUTES", 5, 0, 24*60)) * time.Minute,
		SplitThresholdBytes:   integer("SPLIT_THRESHOLD_BYTES", defaultSplitThreshold, minSplitThreshold, maxSplitThreshold),
		TelegramAppID:         int(integer("TELEGRAM_APP_ID", 0, 0, 1<<31-1)),
		UploadMaxBytes:        integer("UPLOAD_MAX_BYTES", 8<<30, 1<<20, 1<<40),
		DecodeMemoryBytes:     integer("DECODE_MEMORY_BYTES", archive.DefaultDecodeBudget, 16<<20, 16<<30),
		UploadQuotaBytes:      integer("UPLOAD_QUOTA_BYTES", 20<<30, 0, 1<<50),
		DownloadCacheBytes:    integer("DOWNLOAD_CACHE_BYTES", 2<<30, 0, 1<<50),
		DownloadsPerUser:      int(integer("DOWNLOADS_PER_USER", 3, 1, 100)),
		UploadMinFreeBytes:    integer("UPLOAD_MIN_FREE_BYTES", 5<<30, 0, 1<<40),
		UploadRetention:       time.Duration(integer("UPLOAD_RETENTION_DAYS", 7, 0, 3650)) * 24 * time.Hour,
		MaxConcurrentRequests: int(integer("WEB_MAX_CONCURRENT_REQUESTS", 0, 1, 10000)),
		BotSendTimeout:        time.Duration(integer("BOT_SEND_TIMEOUT_SECONDS", 30, 1, 600)) * time.Second,
	}
	c.AccountRate = decimal("ACCOUNT_REQUEST_RATE", 10, 0.01, 100000)
	c.DownloadRate = decimal("DOWNLOAD_REQUEST_RATE", 20, 0.01, 100000)
	c.AccountBurst = int(integer("ACCOUNT_REQUEST_BURST", 5, 1, 1000))
	c.BotLimits = messenger.BotLimits{
		PerChat:      decimal("BOT_CHAT_RATE", messenger.DefaultBotLimits.PerChat, 0.01, 1000),
		PerChatBurst: int(integer("BOT_CHAT_BURST", int64(messenger.DefaultBotLimits.PerChatBurst), 1, 100)),
		Global:       decimal("BOT_GLOBAL_RATE", messenger.DefaultBotLimits.Global, 0.01, 100000),
	}
	if c.SearchCacheTTL = time.Duration(integer("SEARCH_CACHE_SECONDS", 60, 0, 3600)) * time.Second; c.SearchCacheTTL == 0 {
		c.SearchCacheTTL = -1 // web.Deps: negative is off, zero the default
	}
	// The consumers read 0 as their default: none (or at once) is negative.
	for _, v := range []*int64{&c.UploadQuotaBytes, &c.UploadMinFreeBytes, (*int64)(&c.UploadRetention)} {
		if *v == 0 {
			*v = -1
		}
	}
	if c.WebStatementTimeout = time.Duration(integer("WEB_STATEMENT_TIMEOUT_SECONDS", 2, 0, 600)) * time.Second; c.WebStatementTimeout == 0 {
		c.WebStatementTimeout = -1 // web.Deps: negative is none, zero the default
	}
	if abs, err := filepath.Abs(c.DataDir); err != nil {
		bad("DATA_DIR", "%v", err)
	} else {
		c.DataDir = abs
	}
	c.UploadDir = str("UPLOAD_DIR", filepath.Join(c.DataDir, "uploads"))
	if abs, err := filepath.Abs(c.UploadDir); err != nil {
		bad("UPLOAD_DIR", "%v", err)
	} else {
		c.UploadDir = abs
	}

	host, port, err := net.SplitHostPort(c.ListenAddr)
	if err != nil {
		bad("LISTEN_ADDR", "%q is not host:port (for example :8080 or 127.0.0.1:8080)", c.ListenAddr)
	} else if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		bad("LISTEN_ADDR", "port %q is not a number 0–65535", port)
	}

	if c.MetricsAddr != "" {
		if mh, mp, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			bad("METRICS_ADDR", "%q is not host:port (for example 127.0.0.1:9090)", c.MetricsAddr)
		} else if p, err := strconv.Atoi(mp); err != nil || p < 0 || p > 65535 {
			bad("METRICS_ADDR", "port %q is not a number 0–65535", mp)
		} else if mp != "0" && mp == port && (mh == host || mh == "" || host == "") {
			bad("METRICS_ADDR", "%q is the web's LISTEN_ADDR: metrics need a listener of their own", c.MetricsAddr)
		}
	}

	c.AppURL = str("APP_URL", str("NEXT_PUBLIC_APP_URL", defaultAppURL))
	if c.AppURL == "" {
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "localhost"
		}
		c.AppURL = "http://" + net.JoinHostPort(host, port)
	}
	if u, err := url.Parse(c.AppURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("APP_URL", "%q is not an absolute http(s) URL", c.AppURL)
	}
	c.AppURL = strings.TrimRight(c.AppURL, "/")

	switch lvl := strings.ToLower(str("LOG_LEVEL", "info")); lvl {
	case "debug":
		c.LogLevel = slog.LevelDebug
	case "info":
		c.LogLevel = slog.LevelInfo
	case "warn", "warning":
		c.LogLevel = slog.LevelWarn
	case "error":
		c.LogLevel = slog.LevelError
	default:
		bad("LOG_LEVEL", "%q is not one of debug, info, warn, error", lvl)
	}
	c.LogFormat = strings.ToLower(str("LOG_FORMAT", defaultLogFormat()))
	if c.LogFormat != "json" && c.LogFormat != "text" {
		bad("LOG_FORMAT", "%q is not json or text", c.LogFormat)
	}
	switch v := strings.ToLower(str("USERS_CAN_CURATE", "false")); v {
	case "true", "1", "yes":
		c.UsersCanCurate = true
	case "false", "0", "no":
	default:
		bad("USERS_CAN_CURATE", "%q is not true or false", v)
	}
	c.AdminEmail = str("HOARD_ADMIN_EMAIL", "")
	c.AdminPassword = getenv("HOARD_ADMIN_PASSWORD")
	if (c.AdminEmail == "") != (c.AdminPassword == "") {
		bad("HOARD_ADMIN_EMAIL", "HOARD_ADMIN_EMAIL and HOARD_ADMIN_PASSWORD must be set together")
	}
	if c.TelegramAppHash != "" && c.TelegramAppID == 0 {
		bad("TELEGRAM_APP_ID", "is required when TELEGRAM_APP_HASH is set")
	}
	c.SignIn = loadSignIn(str, getenv, bad)
	return c, errors.Join(errs...)
}

// loadSignIn reads the identity providers' variables (OIDC_*, GITHUB_*,
// SIGNUP_EMAIL_DOMAINS); str and getenv read a variable, bad reports one.
func loadSignIn(str func(name, def string) string, getenv func(string) string, bad func(name, format string, args ...any)) web.SignInConfig {
	var sc web.SignInConfig
	if issuer, id := str("OIDC_ISSUER", ""), str("OIDC_CLIENT_ID", ""); issuer != "" || id != "" {
		o := &web.OIDCConfig{Issuer: issuer, ClientID: id, ClientSecret: getenv("OIDC_CLIENT_SECRET"),
			DisplayName: str("OIDC_DISPLAY_NAME", ""), Scopes: splitList(str("OIDC_SCOPES", ""), " ,"),
			AdminClaim: str("OIDC_ADMIN_CLAIM", ""), AdminValues: splitList(str("OIDC_ADMIN_VALUES", ""), ",")}
		switch {
		case issuer == "":
			bad("OIDC_ISSUER", "is required when OIDC_CLIENT_ID is set")
		case id == "":
			bad("OIDC_CLIENT_ID", "is required when OIDC_ISSUER is set")
		}
		if issuer != "" && !secureURL(issuer) {
			bad("OIDC_ISSUER", "%q is not an absolute https URL (http only on a loopback host) without query or fragment", issuer)
		}
		if len([]rune(o.DisplayName)) > 64 {
			bad("OIDC_DISPLAY_NAME", "is longer than 64 characters")
		}
		if (o.AdminClaim == "") != (len(o.AdminValues) == 0) {
			bad("OIDC_ADMIN_CLAIM", "OIDC_ADMIN_CLAIM and OIDC_ADMIN_VALUES must be set together")
		}
		sc.OIDC = o
	} else if str("OIDC_ADMIN_CLAIM", "") != "" || str("OIDC_ADMIN_VALUES", "") != "" {
		bad("OIDC_ADMIN_CLAIM", "needs OIDC_ISSUER and OIDC_CLIENT_ID")
	}
	if id, secret := str("GITHUB_CLIENT_ID", ""), getenv("GITHUB_CLIENT_SECRET"); id != "" || secret != "" {
		if id == "" || secret == "" {
			bad("GITHUB_CLIENT_ID", "GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET must be set together")
		}
		gh := &web.GitHubConfig{ClientID: id, ClientSecret: secret, URL: strings.TrimRight(str("GITHUB_URL", "https://github.com"), "/")}
		if !secureURL(gh.URL) {
			bad("GITHUB_URL", "%q is not an absolute https URL (http only on a loopback host) without query or fragment", gh.URL)
		}
		sc.GitHub = gh
	}
	for _, d := range splitList(strings.ToLower(str("SIGNUP_EMAIL_DOMAINS", "")), ",") {
		d = strings.TrimPrefix(d, "@")
		if !domainName.MatchString(d) {
			bad("SIGNUP_EMAIL_DOMAINS", "%q is not a domain name", d)
		}
		sc.EmailDomains = append(sc.EmailDomains, d)
	}
	if len(sc.EmailDomains) > 0 && sc.OIDC == nil && sc.GitHub == nil {
		bad("SIGNUP_EMAIL_DOMAINS", "needs an identity provider (OIDC_ISSUER or GITHUB_CLIENT_ID)")
	}
	return sc
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

// defaultWorkerID is the host name, made a valid River client id.
func defaultWorkerID() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "hoard-worker"
	}
	return h
}

// minAuthSecret is the shortest AUTH_SECRET the web part accepts.
const minAuthSecret = 32

// checkAuthSecret refuses a missing or short AUTH_SECRET (SPEC
// Authentication 4).
func (c Config) checkAuthSecret() error {
	switch {
	case c.AuthSecret == "":
		return errors.New("AUTH_SECRET is not set: the web application refuses to start without it (generate one with `openssl rand -base64 48`)")
	case len(c.AuthSecret) < minAuthSecret:
		return fmt.Errorf("AUTH_SECRET is %d bytes long: it must be at least %d bytes", len(c.AuthSecret), minAuthSecret)
	}
	return nil
}

func defaultLogFormat() string {
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return "text"
	}
	return "json"
}

// newLogger builds the process logger from the configuration.
func (c Config) newLogger() *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}
