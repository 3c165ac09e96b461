// Package hoard holds the domain types, error codes and job arguments shared by
// every part of hoard: the worker, the web application and the bot.
//
// The root package imports only the standard library and River's types, so
// every other package can depend on it without cycles (see DESIGN.md).
package hoard

import (
	"errors"
	"fmt"
)

// Error codes. Each surface maps them once: the web to an HTTP status, the bot
// to a short reply, jobs to cancel (invalid), snooze (rate limited) or retry.
const (
	EINVALID      = "invalid"
	ENOTFOUND     = "not_found"
	ECONFLICT     = "conflict"
	EUNAUTHORIZED = "unauthorized"
	EFORBIDDEN    = "forbidden"
	ETOOLARGE     = "too_large"
	ERATELIMITED  = "rate_limited"
	EUNAVAILABLE  = "unavailable" // a dependency (the platform, the bot) cannot be reached now
	EINTERNAL     = "internal"
)

// Error is an application error with a code from the list above and a message
// that is safe to show to a user. Err, when set, is the underlying cause; it
// is logged but never shown.
type Error struct {
	Code    string
	Message string
	Err     error
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WrapError returns an *Error with the given code and message whose cause is err.
func WrapError(code string, err error, message string) *Error {
	return &Error{Code: code, Message: message, Err: err}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for
// any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing message of the first *Error in err's
// chain, or a generic message for any other error so that internal details
// never leak to users.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "An internal error has occurred."
}
