package hoard

import "time"

// UploadStatus is the state of a manual upload and of each of its files.
type UploadStatus string

// Upload states. The UI shows three phases: upload (UPLOADING), processing
// (PENDING, PROCESSING) and complete (COMPLETED, PARTIAL, FAILED).
const (
	UploadUploading  UploadStatus = "UPLOADING"
	UploadPending    UploadStatus = "PENDING"
	UploadProcessing UploadStatus = "PROCESSING"
	UploadCompleted  UploadStatus = "COMPLETED"
	UploadPartial    UploadStatus = "PARTIAL" // some files failed (uploads only)
	UploadFailed     UploadStatus = "FAILED"
)

// Phase is the phase the UI shows for a status.
func (s UploadStatus) Phase() string {
	switch s {
	case UploadUploading:
		return "upload"
	case UploadPending, UploadProcessing:
		return "processing"
	default:
		return "complete"
	}
}

// ManualUpload is one upload of one or more files by a user.
type ManualUpload struct {
	ID             int64
	UserID         int64
	GroupName      string
	Status         UploadStatus
	ErrorMessage   string
	PackageGroupID int64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	FinishedAt     *time.Time
	// HeldBytes is what the upload holds of its user's quota: the bytes of
	// its files still on the volume, plus what a request still streaming
	// has reserved.
	HeldBytes int64
	Files     []ManualUploadFile
}

// ManualUploadFile is one file of a manual upload, stored under UPLOAD_DIR
// at a path the server chose.
type ManualUploadFile struct {
	ID           int64
	UploadID     int64
	FileName     string // sanitised user file name, for display and the package
	StoredPath   string // relative to UPLOAD_DIR; never built from user input
	FileSize     int64
	ContentHash  string
	Status       UploadStatus
	ErrorMessage string
	PackageID    int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
	// RemovedAt is when the file's bytes were removed from the volume
	// (its retention ran out, or it duplicated the catalog); nil while
	// they are kept.
	RemovedAt *time.Time
}
