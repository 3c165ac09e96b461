// Package paramtest holds the hostile parameters that every surface's tests
// send (the web's query parameters, the bot's command arguments), with the
// words of the refusal that hoard.CheckParam gives each: one table, so the
// surfaces are held to the same rules.
package paramtest

import "strings"

// Hostile is a parameter value no surface may pass on.
type Hostile struct {
	// Name names the case in a test's name.
	Name string
	// Value is the parameter as a stranger sends it.
	Value string
	// Says is the refusal's words after the parameter's name.
	Says string
}

// HostileValues are the cases: control characters, invalid UTF-8 and
// lengths past hoard.MaxParamLen characters or hoard.MaxParamBytes bytes.
var HostileValues = []Hostile{
	{"NUL inside", "a\x00b", "contains a NUL or another control character."},
	{"NUL at the end", "a\x00", "contains a NUL or another control character."},
	{"invalid UTF-8", "dragon\xff\xfe", "is not valid UTF-8 text."},
	{"escape", "a\x1b[31mred", "contains a NUL or another control character."},
	{"DEL", "a\x7f", "contains a NUL or another control character."},
	{"C1 control", "a\u0085b", "contains a NUL or another control character."},
	{"201 characters", strings.Repeat("é", 201), "is too long (200 characters at most)."},
	{"9,000 bytes", strings.Repeat("a", 9000), "is too long (200 characters at most)."},
}
