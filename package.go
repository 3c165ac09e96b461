package hoard

import "time"

// Package is one ingested file (an archive, a multi-part set or a document)
// as published to the destination channel and indexed in the catalog.
type Package struct {
	ID               int64
	FileName         string
	FileSize         int64
	ArchiveType      ArchiveType
	ContentHash      string // hex SHA-256 over all source parts in order; "" for rows rebuilt from the destination
	PartCount        int
	FileCount        int
	Creator          string
	Tags             []string
	SourceChannelID  int64 // messenger_channels.id; 0 when the channel was deleted
	SourceMessageID  int64 // first source message
	SourceMessageIDs []int64
	SourceTopicID    int64
	SourceCaption    string
	SourcePostedAt   time.Time
	ReplyToMessageID int64
	MediaAlbumID     int64
	RemoteUniqueID   string
	DestChannelID    int64
	DestMessageID    int64
	DestMessageIDs   []int64
	PreviewData      []byte // loaded only by FindPackagePreview; lists carry HasPreview
	PreviewMsgID     int64
	HasPreview       bool
	InspectionNote   string
	PackageGroupID   int64
	IngestionRunID   int64
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// PackageFile is one entry inside a package's archive. DOCUMENT and 7Z
// packages have exactly one entry: the file itself (SPEC rule 5).
type PackageFile struct {
	ID             int64
	PackageID      int64
	Ordinal        int
	Path           string
	FileName       string
	Extension      string
	Size           int64
	CompressedSize int64
	CRC32          *uint32
}

// PackageGroup is a set of packages that belong together.
type PackageGroup struct {
	ID              int64
	Name            string
	GroupingSource  GroupingSource
	GroupingKey     string
	SourceChannelID int64
	HasPreview      bool
	MemberCount     int
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// RuleSignal is the kind of pattern a GroupingRule matches.
type RuleSignal string

// Rule signals learned from manual groups.
const (
	RulePrefix  RuleSignal = "PREFIX"  // file names starting with the pattern
	RuleCreator RuleSignal = "CREATOR" // packages whose creator equals the pattern
)

// GroupingRule is a pattern learned from a manual group; packages that match
// it later join that group.
type GroupingRule struct {
	ID         int64
	GroupID    int64
	ChannelID  int64
	Pattern    string
	SignalType RuleSignal
	Confidence float64
	CreatedAt  time.Time
}
