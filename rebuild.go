package hoard

import "time"

// RebuildRun is one rebuild of the catalog from the destination channel
// (SPEC rule 19). Its counters and LastMessageID advance together with the
// package rows each page of the scan creates, so the row is both the live
// progress the admin page polls and the resume point of a restarted job.
type RebuildRun struct {
	ID     int64
	Status RunStatus // RUNNING, COMPLETED or FAILED
	// DestChannelID is the destination channel scanned (0 when it was
	// deleted since).
	DestChannelID int64
	RebuildCounters
	// LastMessageID is the newest destination message accounted for in the
	// counters; a restarted run reads the history after it.
	LastMessageID int64
	ErrorMessage  string
	RiverJobID    int64
	StartedAt     time.Time
	UpdatedAt     time.Time
	FinishedAt    *time.Time
}

// RebuildCounters are the totals of a rebuild.
type RebuildCounters struct {
	// MessagesScanned counts every destination message read, files or not.
	MessagesScanned int
	// PackagesCreated counts sets indexed as new packages.
	PackagesCreated int
	// PackagesExisting counts sets a package already held.
	PackagesExisting int
	// SetsSkipped counts sets that could not be indexed: parts missing, or
	// messages of a publication still in flight.
	SetsSkipped int
}
