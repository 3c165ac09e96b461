package messenger

import (
	"errors"
	"fmt"
	"time"

	"github.com/hoard/hoard"
)

// Typed errors of the port. Adapters wrap them together with the platform
// error, so both errors.Is(err, ErrX) and hoard.ErrorCode(err) work.
var (
	// ErrAccessLost: the channel is private, invalid, forbidden or the
	// account was banned from it (SPEC: CHANNEL_ACCESS_LOST).
	ErrAccessLost = &hoard.Error{Code: hoard.EFORBIDDEN, Message: "Channel access lost."}
	// ErrNotFound: the username, invite, message or file does not exist.
	ErrNotFound = &hoard.Error{Code: hoard.ENOTFOUND, Message: "Not found on the messaging platform."}
	// ErrUnauthorized: the session is not signed in or was revoked; the
	// account must log in again.
	ErrUnauthorized = &hoard.Error{Code: hoard.EUNAUTHORIZED, Message: "Messaging session is not signed in."}
	// ErrPasswordNeeded: the login needs the account's 2FA password.
	ErrPasswordNeeded = &hoard.Error{Code: hoard.EUNAUTHORIZED, Message: "Two-step verification password needed."}
	// ErrInvalidCode: the login code is wrong or expired.
	ErrInvalidCode = &hoard.Error{Code: hoard.EINVALID, Message: "The login code is invalid or expired."}
	// ErrProtected: the source channel forbids forwarding (noforwards).
	ErrProtected = &hoard.Error{Code: hoard.EFORBIDDEN, Message: "The source channel is protected."}
	// ErrTooLarge: the file exceeds the platform's upload part cap.
	ErrTooLarge = &hoard.Error{Code: hoard.ETOOLARGE, Message: "The file is too large for one upload."}
	// ErrBlocked: the user blocked the bot or deleted their account
	// (USER_IS_BLOCKED, INPUT_USER_DEACTIVATED); they must open the bot
	// and press Start again.
	ErrBlocked = &hoard.Error{Code: hoard.EFORBIDDEN, Message: "The user has blocked the bot."}
	// ErrDuplicate: a send with this random id was already delivered
	// (RANDOM_ID_DUPLICATE).
	ErrDuplicate = &hoard.Error{Code: hoard.ECONFLICT, Message: "Already delivered."}
	// ErrAdminRequired: the account may not make administrators in the
	// channel (only its owner may), so the bot must be added by hand.
	ErrAdminRequired = &hoard.Error{Code: hoard.EFORBIDDEN, Message: "Only the channel's owner can make the bot an administrator."}
	// ErrSessionBusy: another hoard process holds the messaging session
	// (only one process uses an auth key at a time); the work waits for
	// it, or runs in that process.
	ErrSessionBusy = &hoard.Error{Code: hoard.ERATELIMITED,
		Message: "Another hoard process is using this messaging session; this one waits for it."}
	// ErrRateLimited is matched by every *FloodWait.
	ErrRateLimited = &hoard.Error{Code: hoard.ERATELIMITED, Message: "Rate limited by the messaging platform."}
)

// FloodWait is a rate-limit answer (FLOOD_WAIT_X, FLOOD_PREMIUM_WAIT_X): the
// same method may be called again after RetryAfter. errors.Is(err,
// ErrRateLimited) holds for it.
type FloodWait struct {
	RetryAfter time.Duration
	// Premium reports FLOOD_PREMIUM_WAIT, a throughput throttle for
	// non-Premium accounts rather than a failure.
	Premium bool
	// Method is the platform method that was limited, when known.
	Method string
}

// Error implements error.
func (e *FloodWait) Error() string {
	kind := "FLOOD_WAIT"
	if e.Premium {
		kind = "FLOOD_PREMIUM_WAIT"
	}
	if e.Method != "" {
		return fmt.Sprintf("%s: %s: retry after %s", e.Method, kind, e.RetryAfter)
	}
	return fmt.Sprintf("%s: retry after %s", kind, e.RetryAfter)
}

// Unwrap lets errors.Is(err, ErrRateLimited) and hoard.ErrorCode see the
// rate-limit code.
func (e *FloodWait) Unwrap() error { return ErrRateLimited }

// AsFloodWait returns the *FloodWait in err's chain.
func AsFloodWait(err error) (*FloodWait, bool) {
	var fw *FloodWait
	if errors.As(err, &fw) {
		return fw, true
	}
	return nil, false
}

// NotForwardedError is Bot.Copy's report of messages that did not arrive:
// the platform forwards what it can and skips, without an error, the
// messages it cannot forward (deleted or never posted), so only the
// answer tells what arrived. MsgIDs are the skipped ones, in the order
// given; every other message of the call was delivered. errors.Is(err,
// ErrNotFound) holds for it.
type NotForwardedError struct {
	MsgIDs []int
}

// Error implements error.
func (e *NotForwardedError) Error() string {
	return fmt.Sprintf("the platform skipped %d message(s) (deleted or missing): %v", len(e.MsgIDs), e.MsgIDs)
}

// Unwrap lets errors.Is(err, ErrNotFound) and hoard.ErrorCode see the
// not-found code.
func (e *NotForwardedError) Unwrap() error { return ErrNotFound }
