package hoard

// ArchiveType is the kind of a package's file. Archives are decided by their
// content, documents by their extension.
type ArchiveType string

// Archive types.
const (
	ArchiveZIP      ArchiveType = "ZIP"
	ArchiveRAR      ArchiveType = "RAR"
	Archive7Z       ArchiveType = "7Z"
	ArchiveDocument ArchiveType = "DOCUMENT"
)

// ArchiveTypes lists every archive type in display order.
var ArchiveTypes = []ArchiveType{ArchiveZIP, ArchiveRAR, Archive7Z, ArchiveDocument}

// Valid reports whether t is one of ArchiveTypes.
func (t ArchiveType) Valid() bool { return oneOf(t, ArchiveTypes) }

// GroupingSource names the signal that formed a package group.
type GroupingSource string

// Grouping sources, one per signal of SPEC "Grouping of packages".
const (
	GroupAlbum       GroupingSource = "ALBUM"
	GroupManual      GroupingSource = "MANUAL"
	GroupAutoTime    GroupingSource = "AUTO_TIME"
	GroupAutoPattern GroupingSource = "AUTO_PATTERN"
	GroupAutoCreator GroupingSource = "AUTO_CREATOR"
	GroupAutoReply   GroupingSource = "AUTO_REPLY"
	GroupAutoZip     GroupingSource = "AUTO_ZIP"
	GroupAutoCaption GroupingSource = "AUTO_CAPTION"
)

// GroupingSources lists every grouping source.
var GroupingSources = []GroupingSource{GroupAlbum, GroupManual, GroupAutoTime, GroupAutoPattern,
	GroupAutoCreator, GroupAutoReply, GroupAutoZip, GroupAutoCaption}

// Valid reports whether s is one of GroupingSources.
func (s GroupingSource) Valid() bool { return oneOf(s, GroupingSources) }

// NotificationType is the kind of a SystemNotification.
type NotificationType string

// Notification types.
const (
	NotifyHashMismatch      NotificationType = "HASH_MISMATCH"
	NotifyMissingPart       NotificationType = "MISSING_PART"
	NotifyGroupingConflict  NotificationType = "GROUPING_CONFLICT"
	NotifyChannelAccessLost NotificationType = "CHANNEL_ACCESS_LOST"
	NotifyUploadFailed      NotificationType = "UPLOAD_FAILED"
	NotifyDownloadFailed    NotificationType = "DOWNLOAD_FAILED"
	NotifyOrphanedIndex     NotificationType = "ORPHANED_INDEX"
	// NotifyOrphanedPost is a document in the destination channel that no
	// package and no publication in flight points to.
	NotifyOrphanedPost NotificationType = "ORPHANED_POST"
	// NotifySessionEnded is a messenger account the platform signed out
	// (a revoked session, or one used from two places at once).
	NotifySessionEnded NotificationType = "SESSION_ENDED"
	// NotifyDiskLow is a download that waits because the spool's volume
	// has too little free space for it.
	NotifyDiskLow NotificationType = "DISK_LOW"
)

// NotificationTypes lists every notification type.
var NotificationTypes = []NotificationType{NotifyHashMismatch, NotifyMissingPart, NotifyGroupingConflict,
	NotifyChannelAccessLost, NotifyUploadFailed, NotifyDownloadFailed, NotifyOrphanedIndex, NotifyOrphanedPost, NotifySessionEnded,
	NotifyDiskLow}

// Valid reports whether t is one of NotificationTypes.
func (t NotificationType) Valid() bool { return oneOf(t, NotificationTypes) }

// Repairable reports whether the notification offers the repair action
// (repairPackageAction): only MISSING_PART and HASH_MISMATCH do.
func (t NotificationType) Repairable() bool {
	return t == NotifyMissingPart || t == NotifyHashMismatch
}

// Severity is how serious a SystemNotification is.
type Severity string

// Severities.
const (
	SeverityInfo    Severity = "INFO"
	SeverityWarning Severity = "WARNING"
	SeverityError   Severity = "ERROR"
)

// RunStatus is the state of an IngestionRun.
type RunStatus string

// Run states. A run starts RUNNING and ends in exactly one of the others.
const (
	RunRunning   RunStatus = "RUNNING"
	RunCompleted RunStatus = "COMPLETED"
	RunFailed    RunStatus = "FAILED"
	RunCancelled RunStatus = "CANCELLED"
)

// Role is a web user's role.
type Role string

// Roles.
const (
	RoleUser  Role = "USER"
	RoleAdmin Role = "ADMIN"
)

// ChannelKind tells source channels (scanned) from the destination channel
// (published to).
type ChannelKind string

// Channel kinds.
const (
	ChannelSource      ChannelKind = "SOURCE"
	ChannelDestination ChannelKind = "DESTINATION"
)

// AuthState is the sign-in state of a messenger account.
type AuthState string

// Account sign-in states. Any state can move back to AwaitingCode through a
// new login: an expired session is never a dead end.
const (
	AuthPending          AuthState = "PENDING"
	AuthAwaitingCode     AuthState = "AWAITING_CODE"
	AuthAwaitingPassword AuthState = "AWAITING_PASSWORD"
	AuthAuthenticated    AuthState = "AUTHENTICATED"
	AuthExpired          AuthState = "EXPIRED"
	AuthFailed           AuthState = "FAILED"
)

func oneOf[T comparable](v T, all []T) bool {
	for _, a := range all {
		if a == v {
			return true
		}
	}
	return false
}
