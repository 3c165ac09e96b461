package hoard

import "time"

// ExtractionStatus is the state of a PreviewExtraction.
type ExtractionStatus string

// Extraction states: PENDING until the worker picks the job up, RUNNING
// while it fetches and decodes, then DONE (the package's preview was
// replaced) or FAILED (ErrorMessage says why).
const (
	ExtractionPending ExtractionStatus = "PENDING"
	ExtractionRunning ExtractionStatus = "RUNNING"
	ExtractionDone    ExtractionStatus = "DONE"
	ExtractionFailed  ExtractionStatus = "FAILED"
)

// Final reports whether the extraction has ended (DONE or FAILED).
func (s ExtractionStatus) Final() bool { return s == ExtractionDone || s == ExtractionFailed }

// PreviewExtraction is a curator's request to use an image inside a
// package's archive as the package's preview (SPEC rule 10, "chosen from the
// archive contents, extracted on demand"). The row is what the package page
// polls; ExtractPreviewArgs does the work.
type PreviewExtraction struct {
	ID        int64
	PackageID int64
	// EntryPath is the entry's path inside the archive, exactly as listed
	// (untrusted: matched, never used as a file system path).
	EntryPath string
	Status    ExtractionStatus
	// Method says how the bytes were fetched: "ranged" (only the entry's
	// bytes), "whole" (the archive downloaded within the byte budget), or
	// "" before the worker has decided.
	Method string
	// BytesDownloaded counts the bytes the worker downloaded for it.
	BytesDownloaded int64
	ErrorMessage    string
	RequestedBy     int64 // users.id; 0 when the user was deleted
	RiverJobID      int64
	CreatedAt       time.Time
	UpdatedAt       time.Time
	FinishedAt      *time.Time
}
