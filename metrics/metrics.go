// Package metrics is hoard's Prometheus instrumentation: one registry per
// process (never the global default, so tests can build several) with the
// Go runtime and process collectors, the counters and histograms that the
// packages doing the work feed through small interfaces of their own
// (queue.JobObserver, jobs.Metrics, web.Metrics, bot.Metrics,
// messenger.RequestObserver), and collectors that read their values at
// scrape time: River's jobs by kind and state (one grouped query) and the
// spool's disk use (a bounded walk).
//
// Every label set is bounded: job kinds, queues, route patterns (never raw
// paths), TL method names, skip reasons, dedup rules, bot commands and
// delivery outcomes are finite sets, and the platform's account label is
// the account's id, bounded by the accounts an installation has. No label
// names a package, a user or a chat.
//
// It imports the root package and the Prometheus client only.
package metrics

import (
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// namespace prefixes every metric of hoard's own.
const namespace = "hoard"

// Options configure New.
type Options struct {
	// Version is reported by hoard_build_info.
	Version string
	// CountJobs reads River's job counts at scrape time (nil: no
	// hoard_river_jobs series). It is given ScrapeTimeout to answer.
	CountJobs CountJobsFunc
	// SpoolDir is the spool of downloads in flight (DATA_DIR/spool), whose
	// disk use is measured at scrape time ("" : no spool series).
	SpoolDir string
	// Logger reports collectors that failed (default slog.Default()).
	Logger *slog.Logger
}

// ScrapeTimeout bounds what a collector that reads the database or the
// disk may take during one scrape.
const ScrapeTimeout = 2 * time.Second

// Metrics is one process's metrics. Its methods are safe for concurrent
// use; they implement the observer interfaces of queue, jobs, web and bot.
type Metrics struct {
	reg *prometheus.Registry
	log *slog.Logger

	jobDuration      *prometheus.HistogramVec
	ingestBytes      *prometheus.CounterVec
	packagesIndexed  prometheus.Counter
	duplicates       *prometheus.CounterVec
	skipped          *prometheus.CounterVec
	platformRequests *prometheus.CounterVec
	floodWaits       *prometheus.CounterVec
	floodWaitSeconds *prometheus.CounterVec
	transferBytes    *prometheus.CounterVec
	searchDuration   *prometheus.HistogramVec
	httpDuration     *prometheus.HistogramVec
	botCommands      *prometheus.CounterVec
	botDeliveries    *prometheus.CounterVec
	downloadBytes    *prometheus.CounterVec
	downloads        *prometheus.CounterVec
}

// Histogram buckets, in seconds.
var (
	// jobBuckets span a grouping job's milliseconds to a large upload's
	// hour.
	jobBuckets = []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}
	// httpBuckets centre on the web's 50 ms goal.
	httpBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	// searchBuckets separate a search answered from memory (microseconds)
	// from one PostgreSQL answers (milliseconds).
	searchBuckets = []float64{0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}
)

// New builds a process's metrics on a registry of its own, with the Go
// runtime and process collectors.
func New(opts Options) *Metrics {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	m := &Metrics{reg: prometheus.NewRegistry(), log: opts.Logger}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, labels)
		m.reg.MustRegister(c)
		return c
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: name, Help: help, Buckets: buckets}, labels)
		m.reg.MustRegister(h)
		return h
	}
	m.jobDuration = histogram("job_duration_seconds",
		"Time River jobs took to work, by kind, queue and outcome (completed, snoozed, cancelled, failed).", jobBuckets,
		"kind", "queue", "outcome")
	m.ingestBytes = counter("ingest_bytes_total",
		"Bytes the ingestion downloaded from sources, uploaded to the destination, and re-sent there without uploading.", "direction")
	m.packagesIndexed = prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "ingest_packages_indexed_total",
		Help: "Packages the ingestion added to the catalog."})
	m.reg.MustRegister(m.packagesIndexed)
	m.duplicates = counter("ingest_duplicates_total", "Source sets left out as duplicates, by the dedup rule that matched.", "rule")
	m.skipped = counter("ingest_skipped_total", "Source sets that became SKIPPED records (their attempts spent), by reason.", "reason")
	m.platformRequests = counter("platform_requests_total",
		"Requests sent to the messaging platform (each attempt), by account and TL method.", "account", "method")
	m.floodWaits = counter("platform_flood_waits_total", "FLOOD_WAIT answers of the messaging platform, by account and TL method.",
		"account", "method")
	m.floodWaitSeconds = counter("platform_flood_wait_seconds_total", "Seconds the messaging platform asked to wait (FLOOD_WAIT), by account.",
		"account")
	m.transferBytes = counter("platform_transfer_bytes_total",
		"File bytes moved to and from the messaging platform (download and upload chunks), by account and direction.", "account", "direction")
	m.searchDuration = histogram("search_duration_seconds",
		"Time catalog searches took, by whether the web's search cache answered (hit) or PostgreSQL did (miss).", searchBuckets, "cache")
	m.httpDuration = histogram("http_request_duration_seconds",
		"Time the web took to answer requests, by route pattern, method and status class.", httpBuckets, "route", "method", "code")
	m.botCommands = counter("bot_commands_total", "Commands and button presses the chat bot answered, by command.", "command")
	m.botDeliveries = counter("bot_deliveries_total", "Package deliveries of the chat bot (bot_send requests) that reached an outcome: sent, blocked, unlinked, unpublished, missing_part or failed.", "outcome")

	m.downloadBytes = counter("download_bytes_total",
		"Bytes of browser and WebDAV downloads served, by whether the on-disk download cache had them (cache) or the platform was asked (platform).", "source")
	m.downloads = counter("download_requests_total",
		"Browser and WebDAV download requests, by what was asked (package, part, group) and outcome (served, refused).", "kind", "outcome")

	build := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: "build_info",
		Help:        "Always 1: the running version.",
		ConstLabels: prometheus.Labels{"version": opts.Version, "goversion": runtime.Version()}})
	build.Set(1)
	m.reg.MustRegister(build,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if opts.CountJobs != nil {
		m.reg.MustRegister(newJobsCollector(opts.CountJobs, m.log))
	}
	if opts.SpoolDir != "" {
		m.reg.MustRegister(newSpoolCollector(opts.SpoolDir, m.log))
	}
	m.preset()
	return m
}

// preset creates the series of the bounded label values known up front at
// zero, so that dashboards and rate() see them before the first event.
func (m *Metrics) preset() {
	for _, d := range []string{IngestDownloaded, IngestUploaded, IngestResent} {
		m.ingestBytes.WithLabelValues(d)
	}
	for _, r := range dedupRules {
		m.duplicates.WithLabelValues(r)
	}
	for _, r := range hoard.SkipReasons {
		m.skipped.WithLabelValues(string(r))
	}
	for _, c := range []string{"hit", "miss"} {
		m.searchDuration.WithLabelValues(c)
	}
}

// JobWorked records one worked River job (implements queue.JobObserver:
// outcome is one of queue's JobCompleted, JobSnoozed, JobCancelled or
// JobFailed).
func (m *Metrics) JobWorked(kind, queue, outcome string, took time.Duration) {
	m.jobDuration.WithLabelValues(kind, queue, outcome).Observe(took.Seconds())
}

// Directions of hoard_ingest_bytes_total.
const (
	IngestDownloaded = "downloaded"
	IngestUploaded   = "uploaded"
	IngestResent     = "resent"
)

// Downloaded counts bytes the ingestion downloaded from a source
// (implements jobs.Metrics).
func (m *Metrics) Downloaded(bytes int64) {
	m.ingestBytes.WithLabelValues(IngestDownloaded).Add(float64(bytes))
}

// Uploaded counts bytes the ingestion uploaded to the destination
// (implements jobs.Metrics).
func (m *Metrics) Uploaded(bytes int64) {
	m.ingestBytes.WithLabelValues(IngestUploaded).Add(float64(bytes))
}

// Resent counts bytes the ingestion re-sent to the destination without
// uploading them (implements jobs.Metrics).
func (m *Metrics) Resent(bytes int64) {
	m.ingestBytes.WithLabelValues(IngestResent).Add(float64(bytes))
}

// Indexed counts a package the ingestion added to the catalog (implements
// jobs.Metrics).
func (m *Metrics) Indexed() { m.packagesIndexed.Inc() }

// Dedup rules of SPEC rule 4 (Duplicate's rule), named as the store names
// them: a) the platform's remote file id, b) the source message, c) name
// and size, d) the content hash.
const (
	RuleRemoteID      = "remote_unique_id"
	RuleSourceMessage = "source_message"
	RuleNameSize      = "name_and_size"
	RuleContentHash   = "content_hash"
)

var dedupRules = []string{RuleRemoteID, RuleSourceMessage, RuleNameSize, RuleContentHash}

// Duplicate counts a source set left out as a duplicate by rule (one of
// the Rule constants; anything else counts as "other") (implements
// jobs.Metrics).
func (m *Metrics) Duplicate(rule string) {
	m.duplicates.WithLabelValues(oneOf(rule, dedupRules, "other")).Inc()
}

// Skipped counts a source set that became a SKIPPED record (implements
// jobs.Metrics). A reason hoard does not define counts as OTHER.
func (m *Metrics) Skipped(reason hoard.SkipReason) {
	if !reason.Valid() {
		reason = hoard.SkipOther
	}
	m.skipped.WithLabelValues(string(reason)).Inc()
}

// Search records one catalog search and whether the web's cache answered
// it (implements web.Metrics).
func (m *Metrics) Search(cached bool, took time.Duration) {
	c := "miss"
	if cached {
		c = "hit"
	}
	m.searchDuration.WithLabelValues(c).Observe(took.Seconds())
}

// httpMethods are the methods the route label keeps; others count as
// OTHER, so a client inventing methods cannot add series.
var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// UnmatchedRoute is the route label of requests no route matched (404s,
// refused cross-origin requests, methods a path does not take).
const UnmatchedRoute = "unmatched"

// HTTPRequest records one answered web request by its route pattern (chi's,
// such as /packages/{id}; "" counts as UnmatchedRoute), method and status
// (implements web.Metrics). Never pass a raw path.
func (m *Metrics) HTTPRequest(route, method string, status int, took time.Duration) {
	if route == "" {
		route = UnmatchedRoute
	}
	m.httpDuration.WithLabelValues(route, oneOf(method, httpMethods, "OTHER"), statusClass(status)).Observe(took.Seconds())
}

// statusClass is a status code's class: 2xx, 3xx, 4xx or 5xx.
func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return string(rune('0'+status/100)) + "xx"
}

// BotCommand counts one command or button press the bot answered
// (implements bot.Metrics); the bot passes a name from its own bounded set.
func (m *Metrics) BotCommand(name string) { m.botCommands.WithLabelValues(name).Inc() }

// BotDelivery counts requests package deliveries that reached outcome
// (implements bot.Metrics); the bot passes an outcome from its own bounded
// set.
func (m *Metrics) BotDelivery(outcome string, requests int) {
	m.botDeliveries.WithLabelValues(outcome).Add(float64(requests))
}

// Platform returns the observer of one messenger client's requests
// (implements messenger.RequestObserver), labelled account: an account's
// id, or "bot".
func (m *Metrics) Platform(account string) *Platform {
	p := &Platform{m: m, account: account}
	p.flood = m.floodWaitSeconds.WithLabelValues(account)
	p.down = m.transferBytes.WithLabelValues(account, "download")
	p.up = m.transferBytes.WithLabelValues(account, "upload")
	return p
}

// Account is the observer of a messenger account's requests: Platform
// labelled with the account's id, bounded by the accounts an installation
// has.
func (m *Metrics) Account(accountID int64) *Platform {
	return m.Platform(strconv.FormatInt(accountID, 10))
}

// Platform observes one messenger client's requests.
type Platform struct {
	m               *Metrics
	account         string
	flood, down, up prometheus.Counter
}

// Request counts one request sent (each attempt).
func (p *Platform) Request(method string) {
	p.m.platformRequests.WithLabelValues(p.account, method).Inc()
}

// FloodWait records a FLOOD_WAIT answer to method asking to wait d.
func (p *Platform) FloodWait(method string, d time.Duration) {
	p.m.floodWaits.WithLabelValues(p.account, method).Inc()
	p.flood.Add(d.Seconds())
}

// Downloaded counts file bytes received.
func (p *Platform) Downloaded(bytes int64) { p.down.Add(float64(bytes)) }

// Uploaded counts file bytes sent.
func (p *Platform) Uploaded(bytes int64) { p.up.Add(float64(bytes)) }

// oneOf returns v when it is one of known, else other.
func oneOf(v string, known []string, other string) string {
	for _, k := range known {
		if strings.EqualFold(v, k) {
			return k
		}
	}
	return other
}

// DownloadChunk records one chunk of a download served, from the cache or
// from the platform (implements the download service's observer).
func (m *Metrics) DownloadChunk(bytes int, cached bool) {
	source := "platform"
	if cached {
		source = "cache"
	}
	m.downloadBytes.WithLabelValues(source).Add(float64(bytes))
}

// Download records one download request by kind (package, part, group)
// and outcome (served, refused) (implements web.Metrics).
func (m *Metrics) Download(kind, outcome string) {
	m.downloads.WithLabelValues(kind, outcome).Inc()
}
