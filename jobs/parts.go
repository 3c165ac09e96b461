package jobs

import (
	"log/slog"

	"github.com/hoard/hoard/store"
)

// parts are the pieces the workers share, each with one job, made once
// from Deps (newParts) and held by the workers that use them.
type parts struct {
	db  *store.DB
	log *slog.Logger
	// fail applies the failure policies (outcome.go).
	fail *failures
	// platform reaches channels through the accounts' clients.
	platform *platform
	// catalog writes the rows several kinds share (skipped records, run
	// counters, manual uploads) and tells the metrics.
	catalog *catalog
	// notices raises the system notifications of the jobs.
	notices *notices
	// progress records runs' activity and files in flight.
	progress *progress
	// spool holds downloads in flight.
	spool *spool
	// transfers plans and continues publications (split limits, part
	// jobs, posted parts).
	transfers *transfers
	// uploader uploads a part's bytes, resumably.
	uploader *uploader
	// inspector lists a published set and picks its preview.
	inspector *inspector
	// scanner reads a channel's or topic's history (scan_channel,
	// scan_topic).
	scanner *scanner
	// logins signs accounts in (account_login, account_sign_in).
	logins *logins
	// cfg is the configuration the workers read as they are (intervals,
	// budgets, directories).
	cfg Deps
}

// newParts builds the parts from d as it is: Register applies the
// defaults first; tests may leave fields unset.
func newParts(d Deps) *parts {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	m := d.Metrics
	if m == nil {
		m = noMetrics{}
	}
	gauge := d.spool
	if gauge == nil {
		gauge = &spoolGauge{}
	}
	p := &parts{db: d.DB, log: log, cfg: d,
		fail: &failures{log: log, retryBase: d.RetryBase, laterRetry: d.LaterRetry}}
	p.notices = &notices{db: d.DB, log: log}
	p.platform = &platform{db: d.DB, log: log, accounts: d.Accounts}
	p.progress = &progress{db: d.DB, log: log, observeFile: d.observeFile}
	p.spool = &spool{log: log, notices: p.notices, dir: d.SpoolDir, free: d.FreeSpace, minFree: d.SpoolMinFree,
		wait: d.SpoolWait, gauge: gauge}
	p.catalog = &catalog{db: d.DB, log: log, metrics: m, notices: p.notices, uploadDir: d.UploadDir}
	p.transfers = &transfers{db: d.DB, log: log, platform: p.platform, spool: p.spool, catalog: p.catalog,
		splitThreshold: d.SplitThreshold, maxAttempts: d.MaxSkipAttempts}
	p.uploader = &uploader{db: d.DB, log: log, metrics: m, pointLife: d.UploadPointLife, now: d.Now}
	p.inspector = &inspector{log: log}
	p.scanner = &scanner{db: d.DB, log: log, platform: p.platform, progress: p.progress, catalog: p.catalog, notices: p.notices,
		settle: d.SettleTime, interval: d.WorkerInterval, maxAttempts: d.MaxSkipAttempts, clock: d.Now}
	p.logins = &logins{db: d.DB, log: log, logins: d.Logins, secrets: d.Secrets}
	return p
}
