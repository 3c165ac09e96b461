package hoard

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckParam(t *testing.T) {
	tests := []struct {
		name, v string
		want    error
	}{
		{"plain", "dragon bust", nil},
		{"tab and line breaks", "a\tb\r\nc", nil},
		{"200 characters", strings.Repeat("é", 200), nil},
		{"empty", "", nil},
		{"NUL", "a\x00", &Error{Code: EINVALID, Message: "q contains a NUL or another control character."}},
		{"escape", "\x1b[0m", &Error{Code: EINVALID, Message: "q contains a NUL or another control character."}},
		{"C1", "\u009b", &Error{Code: EINVALID, Message: "q contains a NUL or another control character."}},
		{"invalid UTF-8", "\xc3", &Error{Code: EINVALID, Message: "q is not valid UTF-8 text."}},
		{"201 characters", strings.Repeat("é", 201), &Error{Code: EINVALID, Message: "q is too long (200 characters at most)."}},
		{"past the byte bound, NUL too", strings.Repeat("\x00", MaxParamBytes+1), &Error{Code: EINVALID, Message: "q is too long (200 characters at most)."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckParam("q", tt.v, MaxParamLen)
			if (got == nil) != (tt.want == nil) || got != nil && *got.(*Error) != *tt.want.(*Error) {
				t.Errorf("CheckParam(%q) = %v, want %v", tt.v, got, tt.want)
			}
		})
	}
}

// FuzzCheckParam: whatever a client sends, a value CheckParam lets through
// is valid UTF-8 without NUL, of at most MaxParamLen characters, and a
// refusal is EINVALID.
func FuzzCheckParam(f *testing.F) {
	for _, s := range []string{"dragon", "a\x00b", "\xff", strings.Repeat("é", 201), "a\tb\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		err := CheckParam("v", v, MaxParamLen)
		if err != nil {
			if ErrorCode(err) != EINVALID {
				t.Fatalf("CheckParam(%q) = %v, not EINVALID", v, err)
			}
			return
		}
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) || utf8.RuneCountInString(v) > MaxParamLen {
			t.Fatalf("CheckParam let %q through", v)
		}
	})
}
