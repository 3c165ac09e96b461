package hoard

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text a client sends — a web request's parameters, a bot command's
// arguments — is hostile until checked, by one set of rules wherever it
// arrives: UTF-8 without NUL or other control characters (tabs and line
// breaks aside) and of a bounded size, so that nothing a client sends can
// reach the database as a value it refuses or as work without end.
const (
	// MaxParamLen is the default bound of a text parameter, in characters.
	MaxParamLen = 200
	// MaxParamBytes bounds any one value, whatever its own bound.
	MaxParamBytes = 8 << 10
)

// CheckText refuses a value that is not valid UTF-8, holds a NUL or
// another control character (tabs and line breaks are text), or is longer
// than maxBytes: an EINVALID error whose message names the value by name
// ("q contains a NUL or another control character.").
func CheckText(name, v string, maxBytes int) error {
	switch {
	case len(v) > maxBytes:
		return Errorf(EINVALID, "%s is too long.", name)
	case !utf8.ValidString(v):
		return Errorf(EINVALID, "%s is not valid UTF-8 text.", name)
	case strings.ContainsFunc(v, IsControlInput):
		return Errorf(EINVALID, "%s contains a NUL or another control character.", name)
	}
	return nil
}

// CheckParam is CheckText for a value that may have at most maxLen
// characters: one longer, or longer than MaxParamBytes whatever it holds,
// is EINVALID "q is too long (200 characters at most).".
func CheckParam(name, v string, maxLen int) error {
	if len(v) > MaxParamBytes {
		return TooLong(name, maxLen)
	}
	if err := CheckText(name, v, MaxParamBytes); err != nil {
		return err
	}
	if utf8.RuneCountInString(v) > maxLen {
		return TooLong(name, maxLen)
	}
	return nil
}

// TooLong is the EINVALID error of a value named name that has more than
// maxLen characters.
func TooLong(name string, maxLen int) *Error {
	return Errorf(EINVALID, "%s is too long (%d characters at most).", name, maxLen)
}

// IsControlInput reports the characters CheckText refuses: control
// characters other than tab, line feed and carriage return.
func IsControlInput(c rune) bool {
	return unicode.IsControl(c) && c != '\t' && c != '\n' && c != '\r'
}
