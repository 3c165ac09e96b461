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

// BotSendRequest is a queued delivery of one package by the bot to a
// user's linked messenger account.
type BotSendRequest struct {
	ID             int64
	UserID         int64
	PackageID      int64
	PlatformUserID int64
	RequestedBy    int64
	Status         SendStatus
	ErrorMessage   string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	SentAt         *time.Time
	// Filled by ListBotSendRequests.
	UserEmail   string
	PackageName string
}
