package hoard

import "time"

// SendStatus is the state of a BotSendRequest.
type SendStatus string

// Send states: PENDING → SENDING → SENT or FAILED.
const (
	SendPending SendStatus = "PENDING"
	SendSending SendStatus = "SENDING"
	SendSent    SendStatus = "SENT"
	SendFailed  SendStatus = "FAILED"
)

// Final reports whether a request in this state is done (SENT or FAILED).
func (s SendStatus) Final() bool { return s == SendSent || s == SendFailed }

// BotSendRequest is a queued delivery of one package by the bot to a
// user's linked messenger account. PartsSent counts the package's messages
// delivered so far, of PartsTotal.
type BotSendRequest struct {
	ID             int64
	UserID         int64
	PackageID      int64
	PlatformUserID int64
	RequestedBy    int64
	// BatchID is the batch the request is delivered with (0: alone).
	BatchID      int64
	Status       SendStatus
	ErrorMessage string
	PartsTotal   int
	PartsSent    int
	CreatedAt    time.Time
	UpdatedAt    time.Time
	SentAt       *time.Time
	// Filled by ListBotSendRequests.
	UserEmail   string
	PackageName string
}

// BotSubscription is a user's interest in new packages matching Pattern
// (matched as the catalog search matches text). A paused subscription
// (PausedAt set: the user blocked the bot) gets no notices until the user
// writes to the bot again.
type BotSubscription struct {
	ID        int64
	UserID    int64
	Pattern   string
	PausedAt  *time.Time
	CreatedAt time.Time
}

// BotStatus is what the answering bot process last reported, for the
// admin page.
type BotStatus struct {
	BotUserID    int64
	Username     string
	SignedIn     bool
	Holder       string // the process answering commands
	StartedAt    *time.Time
	LastUpdateAt *time.Time // the last command or button press answered
	QueueLength  int        // deliveries waiting or in progress
	// CanReadDest reports whether the bot can read (copy from) every
	// destination channel; nil when not checked yet.
	CanReadDest  *bool
	SetupHint    string // what an administrator must do, when anything
	ErrorMessage string
	UpdatedAt    time.Time
}
