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

// PackageSource is one post of a package's content: the source fields of a
// package and what is derived from its post (file name, creator, the
// channel's category tag). When the same content is posted in several
// places, the earliest post (Before) is the package's source and the others
// are its duplicates, whatever order they were ingested in.
type PackageSource struct {
	ChannelID        int64 // 0: no source post (a manual upload, a rebuilt row)
	MessageID        int64
	MessageIDs       []int64
	TopicID          int64
	Caption          string
	PostedAt         time.Time
	ReplyToMessageID int64
	MediaAlbumID     int64
	RemoteUniqueID   string
	FileName         string
	Creator          string
	Tag              string // the source channel's category; "" when it has none
}

// Before reports whether s was posted before o: by post date, then channel
// id, then message id, so any two distinct posts are ordered and every
// process orders them alike. A source without a channel (a manual upload)
// is before none and after none: it never changes places.
func (s PackageSource) Before(o PackageSource) bool {
	if s.ChannelID == 0 || o.ChannelID == 0 {
		return false
	}
	if !s.PostedAt.Equal(o.PostedAt) {
		return s.PostedAt.Before(o.PostedAt)
	}
	if s.ChannelID != o.ChannelID {
		return s.ChannelID < o.ChannelID
	}
	return s.MessageID < o.MessageID
}

// Source returns p's source post, with tag as its channel's category.
func (p *Package) Source(tag string) PackageSource {
	return PackageSource{ChannelID: p.SourceChannelID, MessageID: p.SourceMessageID, MessageIDs: p.SourceMessageIDs,
		TopicID: p.SourceTopicID, Caption: p.SourceCaption, PostedAt: p.SourcePostedAt, ReplyToMessageID: p.ReplyToMessageID,
		MediaAlbumID: p.MediaAlbumID, RemoteUniqueID: p.RemoteUniqueID, FileName: p.FileName, Creator: p.Creator, Tag: tag}
}

// SetSource makes s p's source post: the source fields, file name and
// creator. Tags are the caller's (SwapTag).
func (p *Package) SetSource(s PackageSource) {
	p.SourceChannelID, p.SourceMessageID, p.SourceMessageIDs, p.SourceTopicID = s.ChannelID, s.MessageID, s.MessageIDs, s.TopicID
	p.SourceCaption, p.SourcePostedAt, p.ReplyToMessageID, p.MediaAlbumID = s.Caption, s.PostedAt, s.ReplyToMessageID, s.MediaAlbumID
	p.RemoteUniqueID, p.FileName, p.Creator = s.RemoteUniqueID, s.FileName, s.Creator
}

// SwapTag returns tags with the category tag oldTag of a package's former
// source channel replaced by newTag, the new source's category, first
// (where ingestion puts it); other tags keep their order. Equal categories
// leave tags as they are.
func SwapTag(tags []string, oldTag, newTag string) []string {
	if oldTag == newTag {
		return tags
	}
	out := make([]string, 0, len(tags)+1)
	if newTag != "" {
		out = append(out, newTag)
	}
	for _, t := range tags {
		if t != oldTag && t != newTag {
			out = append(out, t)
		}
	}
	return out
}

// PackagePart is one destination post of a package as the platform holds
// it: the name and size it was posted under. A package hoard split is
// served joined; one published as the volumes of a set, volume by volume.
type PackagePart struct {
	PartNo        int // 1-based, in destination order
	DestMessageID int64
	Name          string
	Size          int64
}
