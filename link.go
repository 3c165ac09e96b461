package hoard

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

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

// LinkCodeHash is what is stored for a one-time link code: the SHA-256 of
// the code in upper case with spaces trimmed, so the table never holds a
// usable code. The web hashes the code it issues, the bot the code it
// receives, the same way.
func LinkCodeHash(code string) string {
	sum := sha256.Sum256([]byte(strings.ToUpper(strings.TrimSpace(code))))
	return hex.EncodeToString(sum[:])
}
