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
	LastSeenAt     *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
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
