package jobs

import (
	"fmt"
	"regexp"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
)

// platformLoginErrors word the platform's refusals of a login an
// administrator can act on.
var platformLoginErrors = map[string]string{
	"PHONE_NUMBER_INVALID":    "The platform knows no account with this phone number.",
	"PHONE_NUMBER_UNOCCUPIED": "No account uses this phone number on the platform.",
	"PHONE_NUMBER_BANNED":     "The platform has banned this phone number.",
	"PHONE_CODE_INVALID":      "The login code is wrong: type it again.",
	"PHONE_CODE_EXPIRED":      "The login code expired: log in again for a new one.",
	"PHONE_CODE_EMPTY":        "The login code is missing.",
	"PASSWORD_HASH_INVALID":   "The two-step verification password is wrong.",
	"API_ID_INVALID":          "The platform refuses TELEGRAM_APP_ID and TELEGRAM_APP_HASH.",
	"AUTH_RESTART":            "The platform restarted the login: log in again.",
}

// rpcErrorType finds the platform's error type (PHONE_NUMBER_INVALID) in an
// error's text.
var rpcErrorType = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`)

// loginReason says in one sentence why a login step failed, for the
// account's row: a flood wait with its delay, hoard's own message (once,
// without the chain of operations it went through), the platform's refusal
// in words, else the error's text (bounded).
func loginReason(cause error) string {
	if fw, ok := messenger.AsFloodWait(cause); ok {
		return fmt.Sprintf("The platform asks to wait %s before the next login attempt.", fw.RetryAfter)
	}
	if code, msg := hoard.ErrorCode(cause), hoard.ErrorMessage(cause); code != hoard.EINTERNAL && msg != "" {
		return msg
	}
	text := cause.Error()
	if t := rpcErrorType.FindString(text); t != "" {
		if words, ok := platformLoginErrors[t]; ok {
			return words
		}
		return "The platform refused the login (" + t + ")."
	}
	return truncate(text, 500)
}
