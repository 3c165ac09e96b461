package jobs

import (
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
)

// Deps configure the workers: Register builds from them the parts the
// workers share.
type Deps struct {
	DB     *store.DB
	Logger *slog.Logger
	// KeepDismissedNotifications is how long dismissed notifications are
	// kept before clean-up removes them.
	KeepDismissedNotifications time.Duration
	// GroupTimeWindow is AUTO_GROUP_TIME_WINDOW_MINUTES: packages posted
	// this close to each other form an AUTO_TIME group. 0 means the default
	// of 5 minutes; a negative value turns the time-window pass off.
	GroupTimeWindow time.Duration

	// Accounts gives the messenger clients of the signed-in accounts; the
	// ingestion jobs fail with a clear error without it.
	Accounts Accounts
	// Logins gives clients of accounts that are not signed in yet, for the
	// login jobs; Secrets opens (and seals) the login secrets in flight
	// with AUTH_SECRET. Login jobs fail with a clear error without them.
	Logins  Logins
	Secrets *messenger.Sealer
	// SpoolDir holds downloads in flight (DATA_DIR/spool).
	SpoolDir string
	// UploadDir is UPLOAD_DIR, where the web stores manual uploads.
	UploadDir string
	// WorkerInterval is WORKER_INTERVAL_MINUTES: the period of scheduled
	// cycles and the unit of cold-channel backoff.
	WorkerInterval time.Duration
	// MaxSkipAttempts is WORKER_MAX_SKIP_ATTEMPTS (default 5).
	MaxSkipAttempts int
	// SplitThreshold is SPLIT_THRESHOLD_BYTES for accounts without Premium
	// (default 2097152000); Premium accounts use PremiumSplitThreshold.
	SplitThreshold int64
	// SettleTime holds back a set whose newest part is younger (default 10
	// minutes), so that sets posted over several minutes are taken whole.
	SettleTime time.Duration
	// RetryBase is the delay before the first retry of a source set's
	// failed attempt (ingest_message, upload_part, verify_transfer): a
	// transient fault gets a quick second chance (default 30 s).
	RetryBase time.Duration
	// LaterRetry is the delay before the second and later retries of a
	// source set: WorkerInterval by default, so they fall in later cycles
	// and an outage of one interval never spends a set's attempts (SPEC
	// rule 12). A cycle does not wait for retries due more than half an
	// interval ahead.
	LaterRetry time.Duration
	// PreviewDownloadBudget is the largest archive an extract_preview job
	// downloads whole to take a chosen preview out of it (RAR, 7z, a ZIP
	// without a usable index); DefaultPreviewDownloadBudget when <= 0.
	PreviewDownloadBudget int64
	// UploadPointLife is how long a stored resume point of an upload is
	// worth trying (default 1 hour): the platform keeps uploaded parts
	// "between several minutes and several hours" (docs api/files); an
	// older point starts the upload again from part 0.
	UploadPointLife time.Duration
	// UploadRetention is how long a published (and verified) manual
	// upload file is kept in UPLOAD_DIR before the clean-up removes it:
	// 0 is 7 days, negative the first clean-up after its publication.
	UploadRetention time.Duration
	// FreeSpace probes a volume's free space (hoard.FreeBytes when nil);
	// tests simulate a full disk with it.
	FreeSpace hoard.FreeSpaceFunc
	// SpoolMinFree is the free space a download must leave on the spool's
	// volume (UPLOAD_MIN_FREE_BYTES; 0: none beyond fitting): a download
	// that would not waits, its job snoozing, with a DISK_LOW notification.
	SpoolMinFree int64
	// SpoolWait is how long such a download waits before it looks again
	// (default 1 minute).
	SpoolWait time.Duration
	// spool counts the bytes of the downloads this process has started and
	// not finished (shared by the copies of Deps Register hands out).
	spool *spoolGauge
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Metrics is told what the ingestion moved and decided (default:
	// nobody).
	Metrics Metrics
	// observeFile, when set (tests), is told every phase a file in flight
	// enters, as it is recorded.
	observeFile func(hoard.FileProgress)
}

// Metrics is told what the ingestion does, each once its transaction has
// committed (metrics.Metrics implements it). Its methods must be safe for
// concurrent use and quick.
type Metrics interface {
	// Downloaded, Uploaded and Resent are a source set's bytes fetched
	// into the spool, uploaded to the destination, and re-sent there
	// without uploading.
	Downloaded(bytes int64)
	Uploaded(bytes int64)
	Resent(bytes int64)
	// Indexed is a package added to the catalog.
	Indexed()
	// Duplicate is a source set left out by a dedup rule (store's Dup*
	// names).
	Duplicate(rule string)
	// Skipped is a source set that became a SKIPPED record.
	Skipped(reason hoard.SkipReason)
}

type noMetrics struct{}

func (noMetrics) Downloaded(int64)         {}
func (noMetrics) Uploaded(int64)           {}
func (noMetrics) Resent(int64)             {}
func (noMetrics) Indexed()                 {}
func (noMetrics) Duplicate(string)         {}
func (noMetrics) Skipped(hoard.SkipReason) {}

// PremiumSplitThreshold is the split threshold of Premium accounts.
const PremiumSplitThreshold = 4194304000

func (d *Deps) defaults() {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.KeepDismissedNotifications == 0 {
		d.KeepDismissedNotifications = 30 * 24 * time.Hour
	}
	if d.GroupTimeWindow == 0 {
		d.GroupTimeWindow = 5 * time.Minute
	}
	if d.WorkerInterval <= 0 {
		d.WorkerInterval = time.Hour
	}
	if d.MaxSkipAttempts <= 0 {
		d.MaxSkipAttempts = 5
	}
	if d.SplitThreshold <= 0 {
		d.SplitThreshold = 2097152000
	}
	if d.UploadPointLife <= 0 {
		d.UploadPointLife = time.Hour
	}
	if d.SettleTime == 0 {
		d.SettleTime = 10 * time.Minute
	}
	if d.RetryBase <= 0 {
		d.RetryBase = 30 * time.Second
	}
	if d.LaterRetry <= 0 {
		d.LaterRetry = d.WorkerInterval
	}
	if d.UploadRetention == 0 {
		d.UploadRetention = 7 * 24 * time.Hour
	}
	if d.FreeSpace == nil {
		d.FreeSpace = hoard.FreeBytes
	}
	if d.SpoolWait <= 0 {
		d.SpoolWait = time.Minute
	}
	if d.spool == nil {
		d.spool = &spoolGauge{}
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.PreviewDownloadBudget <= 0 {
		d.PreviewDownloadBudget = DefaultPreviewDownloadBudget
	}
	if d.SpoolDir == "" {
		d.SpoolDir = filepath.Join(os.TempDir(), "hoard-spool")
	}
}
