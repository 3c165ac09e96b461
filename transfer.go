package hoard

import "time"

// TransferStatus is the state of a Transfer.
type TransferStatus string

// Transfer states: parts are being posted, the package is being verified
// and indexed, it is indexed, or the publication gave up.
const (
	TransferPublishing TransferStatus = "PUBLISHING"
	TransferVerifying  TransferStatus = "VERIFYING"
	TransferDone       TransferStatus = "DONE"
	TransferFailed     TransferStatus = "FAILED"
)

// Transfer is a package on its way to the destination channel: a downloaded
// source set (SourceChannelID and SourceMessageID set) or a manual upload
// file (ManualUploadFileID set). Its parts are posted by upload_part jobs;
// the last one to finish enqueues verify, which re-hashes the spool files,
// inspects them and indexes Draft.
type Transfer struct {
	ID                 int64
	SourceChannelID    int64
	SourceMessageID    int64
	ManualUploadFileID int64
	IngestionRunID     int64
	AccountID          int64
	DestChannelID      int64
	Status             TransferStatus
	// SpoolPaths are the files holding the bytes, the parts in order.
	SpoolPaths []string
	// KeepFiles keeps the spool files after indexing (manual uploads are
	// retained for recovery).
	KeepFiles   bool
	ContentHash string
	// Draft is the package to index; verify fills in the destination ids,
	// the listing and the preview.
	Draft        Package
	PreviewData  []byte
	PartsTotal   int
	ErrorMessage string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// TransferPart is one piece of a Transfer to post: Length bytes at Offset
// of the logical concatenation of the spool files, posted under Name; or,
// when ResendMessageID is set, that source message re-sent as it is.
type TransferPart struct {
	TransferID      int64
	PartNo          int
	Name            string
	Offset          int64
	Length          int64
	ResendMessageID int64
	DestAfterID     int64
	DestMessageID   int64
	// UploadPoint is where an interrupted upload of the part stands.
	UploadPoint
}

// UploadPoint is the durable resume point of a part's upload: the platform
// stores the first UploadPartsDone parts of the upload UploadFileID, as
// recorded at UploadSavedAt (nil, and the rest zero, when none is).
type UploadPoint struct {
	UploadFileID    int64
	UploadPartsDone int
	UploadSavedAt   *time.Time
}
