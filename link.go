package hoard

import "time"

// MessengerLink joins a web user to a messenger account, made with a
// one-time code the user sends to the bot (/link or the t.me deep link).
type MessengerLink struct {
	ID             int64
	UserID         int64
	PlatformUserID int64
	AccessHash     int64
	Username       string
	LinkedAt       time.Time
}
