package config

import (
	"cmp"
	"log/slog"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/messenger"
)

// Var is one configuration variable: its name, its default, its
// validation (done as Load reads it) and its description.
type Var struct {
	Name string
	// Aliases are older names read, in order, when Name is unset.
	Aliases []string
	// Default is the default as README shows it: the value, "(none)", or
	// what a computed default is.
	Default string
	// Min and Max bound a number when Ranged.
	Min, Max float64
	Ranged   bool
	// Doc is README's "Meaning" of the variable (Markdown).
	Doc string
	// read validates the variable and stores it in the loader's Config; nil
	// for a variable read with others of its group (sign-in).
	read func(l *loader)
}

// Limits of SPLIT_THRESHOLD_BYTES.
const (
	MinSplitThreshold     = 1 << 20
	MaxSplitThreshold     = 8000 * 512 * 1024 // premium accounts
	DefaultSplitThreshold = 4000 * 512 * 1024
)

// defaultGitHubURL is GITHUB_URL's default.
const defaultGitHubURL = "https://github.com"

// Vars lists every variable hoard reads, in README order; Load reads them
// in this order.
var Vars = []Var{
	text("DATABASE_URL", "", func(l *loader, v string) { l.c.DatabaseURL = v }, "PostgreSQL connection string. Unset: hoard runs its own PostgreSQL server from the machine's installation in `$DATA_DIR/pg`. `pool_max_conns` and `pool_min_conns` in it set each process's pool (defaults: 40 for a process that runs the bot, 20 of them kept open; for the others the larger of 4 and the cores).").showing("(embedded)"),
	text("DATA_DIR", "./data", func(l *loader, v string) { l.c.DataDir = l.abs("DATA_DIR", v) }, "Where hoard keeps its state: embedded database, spool of downloads in flight, uploads. Compose uses `/data`."),
	text("UPLOAD_DIR", "", func(l *loader, v string) {
		if v == "" {
			v = filepath.Join(l.c.DataDir, "uploads")
		}
		l.c.UploadDir = l.abs("UPLOAD_DIR", v)
	}, "Manual uploads; shared by web and worker.").showing("`$DATA_DIR/uploads`"),
	integer("UPLOAD_MAX_BYTES", 8<<30, 1<<20, 1<<40, func(c *Config, n int64) { c.UploadMaxBytes = n }, "Largest file a manual upload accepts (8 GiB; range 1 MiB–1 TiB). Files stream to disk, never into memory."),
	integer("DECODE_MEMORY_BYTES", archive.DefaultDecodeBudget, 16<<20, 16<<30, func(c *Config, n int64) { c.DecodeMemoryBytes = n }, "Memory that the images being decoded into previews may take at once in a process (128 MiB; range 16 MiB–16 GiB), counted from each image's header before it is decoded (width × height × bytes per pixel): more images wait their turn, one larger than the whole budget is decoded alone. Previews are refused over 24 megapixels either way."),
	integer("UPLOAD_QUOTA_BYTES", 20<<30, 0, 1<<50, func(c *Config, n int64) { c.UploadQuotaBytes = offIfZero(n) }, "What one user's uploads may hold on the upload volume (20 GiB): files kept there plus uploads streaming in. An upload that would pass it is refused with 413 and a message saying how much is left — before a byte is stored when its length is known, else as soon as it passes — and leaves nothing behind. Administrators have no quota. `0` turns it off (0–1 PiB)."),
	integer("UPLOAD_MIN_FREE_BYTES", 5<<30, 0, 1<<40, func(c *Config, n int64) { c.UploadMinFreeBytes = offIfZero(n) }, "Free space kept on the volumes of `UPLOAD_DIR` and of the spool (`$DATA_DIR/spool`; 5 GiB): uploads are refused (507) while less is free, and a download that would leave less waits (its job snoozes, no attempt spent) with a `DISK_LOW` notification. `0`: only what fits (0–1 TiB)."),
	integer("UPLOAD_RETENTION_DAYS", 7, 0, 3650, func(c *Config, n int64) { c.UploadRetention = offIfZero(time.Duration(n) * 24 * time.Hour) }, "Days a published (and verified) manual upload file is kept in `UPLOAD_DIR` before the hourly clean-up removes it; a file already in the catalog is removed at once, a failed one is kept until its upload is retried or deleted. `0`: removed at the first clean-up after publication (0–3650)."),
	text("LISTEN_ADDR", ":8080", readListenAddr, "Address of the web listener (`/healthz`, `/readyz`, the application)."),
	text("METRICS_ADDR", "", readMetricsAddr, "Address of a listener of its own serving Prometheus metrics at `/metrics` (for example `127.0.0.1:9090`; see Monitoring). Never the web's port: keep it off the public network.").showing("(off)"),
	secret("AUTH_SECRET", func(c *Config, v string) { c.AuthSecret = v }, "At least 32 bytes; signs sessions and encrypts stored messenger sessions and the login codes and passwords in flight to the worker (changing it loses both). Required by `web`, `worker` and `serve`; `demo` generates one into `$DATA_DIR`."),
	text("APP_URL", "", readAppURL, "Public base URL for links and redirects. `NEXT_PUBLIC_APP_URL` is accepted too; may be baked in with `-ldflags -X main.defaultAppURL=…`.").showing("`http://localhost:<port>`").alias("NEXT_PUBLIC_APP_URL"),
	integer("TELEGRAM_APP_ID", 0, 0, 1<<31-1, func(c *Config, n int64) { c.TelegramAppID = int(n) }, "Messenger API id of the worker's client application.").showing("(none)"),
	text("TELEGRAM_APP_HASH", "", func(l *loader, v string) {
		if l.c.TelegramAppHash = v; v != "" && l.c.TelegramAppID == 0 {
			l.bad("TELEGRAM_APP_ID", "is required when TELEGRAM_APP_HASH is set")
		}
	}, "Messenger API hash; never logged."),
	text("TELEGRAM_EMULATOR", "", func(l *loader, v string) { l.c.TelegramEmulator = v }, "Path of the info file written by `hoard emulator`; when set, clients talk to the emulator instead of the platform."),
	decimal("ACCOUNT_REQUEST_RATE", 10, 0.01, 100000, func(c *Config, f float64) { c.AccountRate = f }, "Requests per second one messenger account makes, across every worker process on the database (see [More worker processes](#more-worker-processes); 0.01–100000)."),
	integer("ACCOUNT_REQUEST_BURST", 5, 1, 1000, func(c *Config, n int64) { c.AccountBurst = int(n) }, "Requests one messenger account may make at once before `ACCOUNT_REQUEST_RATE` applies (1–1000)."),
	text("BOT_TOKEN", "", func(l *loader, v string) { l.c.BotToken = v }, "Token the chat bot signs in with; never logged."),
	text("BOT_USERNAME", "", func(l *loader, v string) { l.c.BotUsername = strings.TrimPrefix(v, "@") }, "The bot's username, for `t.me` deep links. Unset: the name the running bot reports."),
	decimal("BOT_CHAT_RATE", messenger.DefaultBotLimits.PerChat, 0.01, 1000, func(c *Config, f float64) { c.BotLimits.PerChat = f }, "Messages per second the bot sends to one chat, after a burst of `BOT_CHAT_BURST` (the platform's limit is about 1; 0.01–1000)."),
	integer("BOT_CHAT_BURST", int64(messenger.DefaultBotLimits.PerChatBurst), 1, 100, func(c *Config, n int64) { c.BotLimits.PerChatBurst = int(n) }, "Messages the bot may send to one chat at once before `BOT_CHAT_RATE` applies (1–100)."),
	integer("BOT_SEND_TIMEOUT_SECONDS", 30, 1, 600, func(c *Config, n int64) { c.BotSendTimeout = time.Duration(n) * time.Second }, "How long the bot waits for the platform to confirm a message before sending it again; the repeat carries the same random id, so nothing arrives twice (1–600)."),
	decimal("BOT_GLOBAL_RATE", messenger.DefaultBotLimits.Global, 0.01, 100000, func(c *Config, f float64) { c.BotLimits.Global = f }, "Messages per second the bot sends in all, across every bot process (the platform's limit is about 30; 0.01–100000)."),
	integer("DOWNLOAD_CACHE_BYTES", 2<<30, 0, 1<<50, func(c *Config, n int64) { c.DownloadCacheBytes = n }, "Recently served chunks of downloads kept on disk in `$DATA_DIR/download-cache` (2 GiB), least recently used first out: a second download of the same file asks the platform nothing. `0` keeps none (0–1 PiB)."),
	decimal("DOWNLOAD_REQUEST_RATE", 20, 0.01, 100000, func(c *Config, f float64) { c.DownloadRate = f }, "Platform requests per second that browser and WebDAV downloads make in all, across every web process (each fetches 1 MiB); they go through the bot's session of the web process, never an account's, so ingestion keeps its own budget (0.01–100000)."),
	integer("DOWNLOADS_PER_USER", 3, 1, 100, func(c *Config, n int64) { c.DownloadsPerUser = int(n) }, "Downloads one user may run at once; another is answered 429 until one ends (1–100)."),
	integer("WORKER_INTERVAL_MINUTES", 60, 1, 7*24*60, func(c *Config, n int64) { c.WorkerInterval = time.Duration(n) * time.Minute }, "Minutes between scheduled ingestion cycles (1–10080), which run on the interval's multiples of UTC time (60: every hour on the hour), so the worker panel's countdown is the real time of the next one. On an install where no cycle ever ran, the worker starts one as it starts."),
	integer("WORKER_MAX_SKIP_ATTEMPTS", 5, 1, 100, func(c *Config, n int64) { c.WorkerMaxSkipAttempts = int(n) }, "Attempts per failing source message before it stays skipped (1–100): the second 30 s after the first, each later one a `WORKER_INTERVAL_MINUTES` after the one before (see [Failures and retries](#failures-and-retries))."),
	integer("WORKER_SETTLE_MINUTES", 10, 0, 24*60, func(c *Config, n int64) { c.WorkerSettle = time.Duration(n) * time.Minute }, "A multi-part set whose newest part is younger than this is left for a later cycle, so sets posted over several minutes are taken whole (0–1440)."),
	integer("DOWNLOAD_STALL_SECONDS", 30, 1, 3600, func(c *Config, n int64) { c.DownloadStall = time.Duration(n) * time.Second }, "A download that makes no progress for this long is resumed from where it stopped (at most 5 times per attempt; 1–3600)."),
	text("WORKER_ID", "", func(l *loader, v string) { l.c.WorkerID = cmp.Or(v, defaultWorkerID()) }, "Name of this worker process in River UI; give each worker process on one host its own. Jobs a stopped worker left running are resumed when it starts again.").showing("the host name"),
	integer("SESSION_LEASE_SECONDS", 20, 3, 600, func(c *Config, n int64) { c.SessionLease = time.Duration(n) * time.Second }, "A messaging session (auth key) is used by one process at a time, which renews its lease in PostgreSQL; when that process dies, another may take the session this long after its last renewal (see [Running against the real platform](#running-against-the-real-platform); 3–600)."),
	integer("AUTO_GROUP_TIME_WINDOW_MINUTES", 5, 0, 24*60, func(c *Config, n int64) { c.AutoGroupTimeWindow = time.Duration(n) * time.Minute }, "Window of the time-based grouping pass; `0` disables it (0–1440)."),
	integer("SPLIT_THRESHOLD_BYTES", DefaultSplitThreshold, MinSplitThreshold, MaxSplitThreshold, func(c *Config, n int64) { c.SplitThresholdBytes = n }, "Files above this are split (4000 × 512 KiB, the non-premium limit). Premium accounts use 4194304000. Range 1 MiB–4194304000."),
	integer("SEARCH_CACHE_SECONDS", 60, 0, 3600, func(c *Config, n int64) { c.SearchCacheTTL = offIfZero(time.Duration(n) * time.Second) }, "How long the web may answer a catalog search from memory (0 turns the cache off; 0–3600). Any change to the catalog, by any process, drops the cached results at once (`catalog_changed`); this bounds only what a lost notification could leave behind."),
	integer("WEB_MAX_CONCURRENT_REQUESTS", 0, 1, 10000, func(c *Config, n int64) { c.MaxConcurrentRequests = int(n) }, "Requests the web serves at once; the others wait their turn in arrival order (uploads, health checks and static files never wait). Raise it when the database is remote and requests mostly wait on it (1–10000).").showing("2 per CPU"),
	integer("WEB_STATEMENT_TIMEOUT_SECONDS", 2, 0, 600, func(c *Config, n int64) { c.WebStatementTimeout = offIfZero(time.Duration(n) * time.Second) }, "PostgreSQL cancels a web request's statement that runs longer, and the request answers 503; no request can hold the database for long. The worker's jobs are never bounded by it (0 turns it off; 0–600)."),
	text("USERS_CAN_CURATE", "false", func(l *loader, v string) {
		switch v = strings.ToLower(v); v {
		case "true", "1", "yes":
			l.c.UsersCanCurate = true
		case "false", "0", "no":
		default:
			l.bad("USERS_CAN_CURATE", "%q is not true or false", v)
		}
	}, "`true` lets every signed-in user edit the catalog (tags, creators, groups, previews); otherwise only administrators."),
	text("HOARD_ADMIN_EMAIL", "", func(l *loader, v string) { l.c.AdminEmail = v }, "With `HOARD_ADMIN_PASSWORD`: make sure this administrator exists at start-up (automated setups). An existing user is promoted; its password is kept."),
	secret("HOARD_ADMIN_PASSWORD", func(c *Config, v string) { c.AdminPassword = v }, "Password for a new `HOARD_ADMIN_EMAIL` administrator (at least 10 characters); never logged.").check(func(l *loader) {
		if (l.c.AdminEmail == "") != (l.c.AdminPassword == "") {
			l.bad("HOARD_ADMIN_EMAIL", "HOARD_ADMIN_EMAIL and HOARD_ADMIN_PASSWORD must be set together")
		}
	}),
	group("OIDC_ISSUER", "Issuer URL of an OpenID Connect provider, exactly as it names itself (trailing slash included): with `OIDC_CLIENT_ID` the sign-in page offers it (see [Sign-in with an identity provider](#sign-in-with-an-identity-provider)). https, or http on a loopback host."),
	group("OIDC_CLIENT_ID", "Client id of hoard at the OpenID Connect provider."),
	group("OIDC_CLIENT_SECRET", "Client secret of hoard at the OpenID Connect provider (empty for a public client); never logged."),
	group("OIDC_DISPLAY_NAME", "What the button calls the provider: \"Sign in with …\" (at most 64 characters).").showing("the issuer's host"),
	group("OIDC_SCOPES", "Scopes to ask for besides `openid email profile`, separated by spaces or commas (e.g. `groups` for a role claim)."),
	group("OIDC_ADMIN_CLAIM", "With `OIDC_ADMIN_VALUES`: the claim (a dotted path such as `realm_access.roles` reaches into nested objects) that decides the role at every sign-in through the provider: ADMIN when it holds one of the values, USER otherwise (the last administrator keeps the role). Unset: the provider never changes a role, and its new accounts are USERs."),
	group("OIDC_ADMIN_VALUES", "Comma-separated values of `OIDC_ADMIN_CLAIM` that make an administrator (e.g. `hoard-admins`)."),
	group("GITHUB_CLIENT_ID", "Client id of a GitHub OAuth app: with `GITHUB_CLIENT_SECRET` the sign-in page offers GitHub."),
	group("GITHUB_CLIENT_SECRET", "Client secret of the GitHub OAuth app; never logged."),
	group("GITHUB_URL", "A GitHub Enterprise server instead (its API at `/api/v3`).").showing("`" + defaultGitHubURL + "`"),
	group("SIGNUP_EMAIL_DOMAINS", "Comma-separated e-mail domains (e.g. `example.com`): a person whose provider has verified an address in one of them gets an account at the first sign-in through the provider without an invite code. Registration with a password always needs one."),
	text("LOG_LEVEL", "info", func(l *loader, v string) {
		switch v = strings.ToLower(v); v {
		case "debug":
			l.c.LogLevel = slog.LevelDebug
		case "info":
			l.c.LogLevel = slog.LevelInfo
		case "warn", "warning":
			l.c.LogLevel = slog.LevelWarn
		case "error":
			l.c.LogLevel = slog.LevelError
		default:
			l.bad("LOG_LEVEL", "%q is not one of debug, info, warn, error", v)
		}
	}, "`debug`, `info`, `warn` or `error`."),
	text("LOG_FORMAT", "", func(l *loader, v string) {
		if l.c.LogFormat = strings.ToLower(cmp.Or(v, defaultLogFormat())); l.c.LogFormat != "json" && l.c.LogFormat != "text" {
			l.bad("LOG_FORMAT", "%q is not json or text", l.c.LogFormat)
		}
	}, "`json` or `text`.").showing("`text` on a terminal, else `json`"),
}

// integer is a whole-number variable within lo–hi; unset, it is def.
func integer(name string, def, lo, hi int64, set func(*Config, int64), doc string) Var {
	v := Var{Name: name, Default: "`" + strconv.FormatInt(def, 10) + "`", Min: float64(lo), Max: float64(hi), Ranged: true, Doc: doc}
	v.read = func(l *loader) {
		n := def
		if s := l.str(name, ""); s != "" {
			p, err := strconv.ParseInt(s, 10, 64)
			switch {
			case err != nil:
				l.bad(name, "%q is not a whole number", s)
			case p < lo || p > hi:
				l.bad(name, "%d is out of range %d–%d", p, lo, hi)
			default:
				n = p
			}
		}
		set(&l.c, n)
	}
	return v
}

// decimal is a number variable within lo–hi; unset, it is def.
func decimal(name string, def, lo, hi float64, set func(*Config, float64), doc string) Var {
	v := Var{Name: name, Default: "`" + strconv.FormatFloat(def, 'g', -1, 64) + "`", Min: lo, Max: hi, Ranged: true, Doc: doc}
	v.read = func(l *loader) {
		f := def
		if s := l.str(name, ""); s != "" {
			p, err := strconv.ParseFloat(s, 64)
			switch {
			case err != nil || math.IsNaN(p):
				l.bad(name, "%q is not a number", s)
			case p < lo || p > hi:
				l.bad(name, "%g is out of range %g–%g", p, lo, hi)
			default:
				f = p
			}
		}
		set(&l.c, f)
	}
	return v
}

// text is a variable read trimmed (def when unset or blank); read
// validates and stores it.
func text(name, def string, read func(l *loader, v string), doc string) Var {
	shown := "(none)"
	if def != "" {
		shown = "`" + def + "`"
	}
	v := Var{Name: name, Default: shown, Doc: doc}
	v.read = func(l *loader) {
		read(l, l.str(name, def))
	}
	return v
}

// secret is a variable read exactly as set (spaces are part of a secret);
// it has no default.
func secret(name string, set func(*Config, string), doc string) Var {
	return Var{Name: name, Default: "(none)", Doc: doc, read: func(l *loader) { set(&l.c, l.raw(name)) }}
}

// group is a variable read with the others of its group (loader.signIn).
func group(name, doc string) Var { return Var{Name: name, Default: "(none)", Doc: doc} }

// showing sets what README shows as the default.
func (v Var) showing(def string) Var { v.Default = def; return v }

// alias records an older name that the variable's read looks at when it
// is unset.
func (v Var) alias(name string) Var { v.Aliases = append(v.Aliases, name); return v }

// check adds a validation run after the variable is read.
func (v Var) check(f func(l *loader)) Var {
	read := v.read
	v.read = func(l *loader) { read(l); f(l) }
	return v
}
