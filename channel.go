package hoard

import "time"

// Channel is a messenger channel hoard knows: a source it scans or the
// destination it publishes to.
type Channel struct {
	ID               int64
	PlatformID       int64
	Title            string
	Username         string
	InviteLink       string
	Kind             ChannelKind
	Category         string
	IsActive         bool
	AutoGroupEnabled bool
	IsForum          bool
	IsProtected      bool
	AccessLostAt     *time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Account is a messenger user account the worker signs in with.
type Account struct {
	ID             int64
	Phone          string
	DisplayName    string
	PlatformUserID int64
	IsPremium      bool
	IsActive       bool
	AuthState      AuthState
	AuthError      string
	// LoginPending reports a login code or password submitted and not yet
	// checked by the worker (the secret itself never leaves the store).
	LoginPending bool
	LastSeenAt   *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// MapRole is what an account does with a mapped channel.
type MapRole string

// Map roles.
const (
	MapReader MapRole = "READER" // scans a source channel
	MapWriter MapRole = "WRITER" // publishes to the destination
)

// ScanState is the cold-channel backoff state kept per channel map and per
// topic (SPEC rule 18).
type ScanState struct {
	LastScannedAt         time.Time
	LastScanFoundArchives bool
	ConsecutiveEmptyScans int
	// PartialScanFound reports that pages of a scan not finished yet (one
	// interrupted by a flood wait, a crash or a restart) queued archives:
	// the scan that finishes counts them as found, and resets it.
	PartialScanFound bool
}

// ChannelMap is one account's view of one channel: its access hash, its
// watermark and its scan state.
type ChannelMap struct {
	ID                     int64
	AccountID              int64
	ChannelID              int64
	AccessHash             int64
	Role                   MapRole
	LastProcessedMessageID int64
	ScanState
	CreatedAt time.Time
}

// TopicProgress is the watermark and scan state of one forum topic under a
// channel map.
type TopicProgress struct {
	ID                     int64
	AccountChannelMapID    int64
	TopicID                int64
	TopicName              string
	IsGeneral              bool
	FetchEnabled           bool
	LastProcessedMessageID int64
	ScanState
	CreatedAt time.Time
	UpdatedAt time.Time
}

// JoinStatus is the state of a ChannelJoin: PENDING until the worker has
// tried, then one of the outcomes.
type JoinStatus string

// Join request states.
const (
	JoinPending     JoinStatus = "PENDING"
	JoinJoined      JoinStatus = "JOINED"       // member (joined now or already); the channel is a source
	JoinRequestSent JoinStatus = "REQUEST_SENT" // the channel approves members: an admin must accept
	JoinNotFound    JoinStatus = "NOT_FOUND"    // no channel under that username or invite
	JoinFailed      JoinStatus = "FAILED"       // any other failure; see the error message
)

// JoinStatuses lists every join request state.
var JoinStatuses = []JoinStatus{JoinPending, JoinJoined, JoinRequestSent, JoinNotFound, JoinFailed}

// Valid reports whether s is one of JoinStatuses.
func (s JoinStatus) Valid() bool { return oneOf(s, JoinStatuses) }

// Final reports whether the worker is done with a request in state s.
func (s JoinStatus) Final() bool { return s != JoinPending }

// ChannelJoin is an administrator's request to add a source channel by link,
// @username or invite link, and its outcome: the row the admin page shows
// while the worker joins.
type ChannelJoin struct {
	ID int64
	// Ref is the normalised reference: "@name" or "https://t.me/+HASH".
	Ref       string
	AccountID int64 // the account that joins (0 once the account is deleted)
	Category  string
	Status    JoinStatus
	// ChannelID is the channel row once joined (0 before, or when the
	// channel was not joined).
	ChannelID    int64
	Title        string
	ErrorMessage string
	RiverJobID   int64
	RequestedBy  int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
	FinishedAt   *time.Time
}
