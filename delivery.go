package hoard

import (
	"time"

	"github.com/riverqueue/river"
)

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

// BotSendArgs delivers one BotSendRequest: the bot copies every part of the
// package (all destMessageIds) to the linked account. Inserted with the
// request row; the bot_send notification only wakes the bot sooner.
type BotSendArgs struct {
	RequestID int64 `json:"request_id"`
}

// Kind implements river.JobArgs.
func (BotSendArgs) Kind() string { return "bot_send" }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (BotSendArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueBot, MaxAttempts: 5}
}
