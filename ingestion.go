package hoard

import (
	"encoding/json"
	"time"
)

// RunTrigger says what started an ingestion run.
type RunTrigger string

// Run triggers.
const (
	TriggerSchedule RunTrigger = "SCHEDULE"
	TriggerManual   RunTrigger = "MANUAL"
	TriggerDemo     RunTrigger = "DEMO"
)

// IngestionRun is one ingestion cycle with its live activity and counters.
type IngestionRun struct {
	ID                         int64
	Status                     RunStatus
	Trigger                    RunTrigger
	CurrentActivity            string
	CurrentStep                string
	CurrentChannelID           int64
	CurrentTopicID             int64
	CurrentAccountChannelMapID int64
	CurrentFile                string
	CurrentBytes               int64
	CurrentTotalBytes          int64
	RunCounters
	ErrorMessage string
	StartedAt    time.Time
	UpdatedAt    time.Time
	FinishedAt   *time.Time
}

// RunCounters are the totals of an ingestion run. Once the run is over
// they add up: ArchivesFound = Ingested + Duplicates + Skipped + HeldBack.
type RunCounters struct {
	MessagesScanned int
	// ArchivesFound counts the candidate sets the scans found, re-posts
	// within one scan included.
	ArchivesFound int
	Duplicates    int
	// Ingested counts the packages published, new or repaired in place.
	Ingested int
	// Skipped counts the sets that ended SKIPPED, or that wait for a
	// manual retry of an earlier skip.
	Skipped int
	// HeldBack counts the sets left for a later cycle: still settling, or
	// their topic or channel switched off before they were downloaded.
	HeldBack int
}

// RunActivity is a live-progress update of a running ingestion run.
type RunActivity struct {
	Activity            string
	Step                string
	ChannelID           int64
	TopicID             int64
	AccountChannelMapID int64
	File                string
	Bytes               int64
	TotalBytes          int64
}

// FilePhase is what the worker is doing with a file in flight, in the order
// of an ingestion: downloading, splitting (the byte-range plan), uploading
// or forwarding each part, verifying (the posted parts re-hashed from the
// spool), indexing (listing, preview, the catalog's rows).
type FilePhase string

// File phases.
const (
	PhaseDownloading FilePhase = "downloading"
	PhaseSplitting   FilePhase = "splitting"
	PhaseUploading   FilePhase = "uploading"
	PhaseForwarding  FilePhase = "forwarding"
	PhaseVerifying   FilePhase = "verifying"
	PhaseIndexing    FilePhase = "indexing"
)

// FileProgress is the live progress of one job's file in flight: the phase,
// for a part's upload its number (1-based) of Parts, and the bytes of the
// phase done of TotalBytes (0 when the phase has no measure). StartBytes
// is Bytes when the phase began (an upload resumed from a stored point),
// so that the rate counts only what this phase moved since PhaseStartedAt.
type FileProgress struct {
	RunID          int64     `json:"run_id"`
	ChannelID      int64     `json:"channel_id"`
	MessageID      int64     `json:"message_id"`
	File           string    `json:"file"`
	Phase          FilePhase `json:"phase"`
	Part           int       `json:"part,omitempty"`
	Parts          int       `json:"parts,omitempty"`
	Bytes          int64     `json:"bytes"`
	TotalBytes     int64     `json:"total_bytes"`
	StartBytes     int64     `json:"start_bytes"`
	PhaseStartedAt time.Time `json:"phase_started_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// Rate is the phase's bytes per second so far; 0 when unknown.
func (p FileProgress) Rate() float64 {
	secs := p.UpdatedAt.Sub(p.PhaseStartedAt).Seconds()
	if secs < 0.5 || p.Bytes <= p.StartBytes {
		return 0
	}
	return float64(p.Bytes-p.StartBytes) / secs
}

// Left is the phase's time left at Rate; 0 when unknown.
func (p FileProgress) Left() time.Duration {
	r := p.Rate()
	if r <= 0 || p.TotalBytes <= p.Bytes {
		return 0
	}
	return time.Duration(float64(p.TotalBytes-p.Bytes) / r * float64(time.Second))
}

// SkipReason is why a source message could not be ingested.
type SkipReason string

// Skip reasons.
const (
	SkipDownloadFailed SkipReason = "DOWNLOAD_FAILED"
	SkipUploadFailed   SkipReason = "UPLOAD_FAILED"
	SkipExtractFailed  SkipReason = "EXTRACT_FAILED"
	SkipHashMismatch   SkipReason = "HASH_MISMATCH"
	SkipIncompleteSet  SkipReason = "INCOMPLETE_SET"
	SkipSizeLimit      SkipReason = "SIZE_LIMIT"
	SkipAccessLost     SkipReason = "ACCESS_LOST"
	SkipOther          SkipReason = "OTHER"
)

// SkipReasons lists every skip reason.
var SkipReasons = []SkipReason{SkipDownloadFailed, SkipUploadFailed, SkipExtractFailed, SkipHashMismatch, SkipIncompleteSet,
	SkipSizeLimit, SkipAccessLost, SkipOther}

// Valid reports whether r is one of SkipReasons.
func (r SkipReason) Valid() bool { return oneOf(r, SkipReasons) }

// SkipStatus tells a skipped package that River still retries from one it
// gave up on.
type SkipStatus string

// Skip states.
const (
	SkipRetrying SkipStatus = "RETRYING"
	SkipGaveUp   SkipStatus = "SKIPPED"
)

// SkippedPackage records a source message that failed to ingest, with its
// attempt counter (SPEC rule 12).
type SkippedPackage struct {
	ID                  int64
	SourceChannelID     int64
	SourceMessageID     int64
	SourceTopicID       int64
	AccountChannelMapID int64
	FileName            string
	FileSize            int64
	PartCount           int
	Reason              SkipReason
	Status              SkipStatus
	AttemptCount        int
	MaxAttempts         int
	LastError           string
	RiverJobID          int64
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// Notification is a persistent alert shown in the notifications bell.
type Notification struct {
	ID          int64
	Type        NotificationType
	Severity    Severity
	Title       string
	Message     string
	Context     json.RawMessage
	DedupKey    string
	PackageID   int64
	ChannelID   int64
	IsRead      bool
	ReadAt      *time.Time
	Dismissed   bool
	DismissedAt *time.Time
	CreatedAt   time.Time
}

// NextScheduledCycle is when the scheduled ingestion cycle after now runs,
// with WORKER_INTERVAL_MINUTES interval: on the interval's multiples of
// wall-clock time (UTC; every hour on the hour for 60 minutes), so every
// process — the worker that schedules, the web that shows the countdown —
// computes the same time, whatever ran by hand or restarted meanwhile.
func NextScheduledCycle(now time.Time, interval time.Duration) time.Time {
	return now.UTC().Truncate(interval).Add(interval)
}
