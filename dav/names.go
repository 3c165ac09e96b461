package dav

import (
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Runes that stand for what a path segment cannot hold. Every name Segment
// alters holds at least one of them, so a segment without any (and
// without a duplicate's suffix) is a row's name exactly: it resolves by an
// indexed lookup instead of a folder listing.
const (
	slashRune     = '∕' // U+2215 DIVISION SLASH, for '/'
	backslashRune = '⧵' // U+29F5 REVERSE SOLIDUS OPERATOR, for '\'
	controlRune   = '�' // U+FFFD, for control characters, invalid UTF-8 and an empty name
	dotRune       = '․' // U+2024 ONE DOT LEADER, for the dots of "." and ".."
)

// Segment returns name as a safe single path segment: '/' and '\' become
// look-alikes (∕ ⧵), control characters, bidirectional overrides and
// invalid UTF-8 become U+FFFD, "." and ".." become one-dot leaders (․ ․․)
// and an empty name U+FFFD. Other names are returned as they are.
func Segment(name string) string {
	switch name {
	case "":
		return string(controlRune)
	case ".", "..":
		return strings.Repeat(string(dotRune), len(name))
	}
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range name {
		switch {
		case r == '/':
			r = slashRune
		case r == '\\':
			r = backslashRune
		case unsafeRune(r):
			r = controlRune
		}
		b.WriteRune(r)
	}
	return b.String()
}

// unsafeRune reports whether r must not appear in a name: a control
// character, a line or paragraph separator, a bidirectional override
// (which makes a listing display a name other than it is), or the
// replacement character that invalid UTF-8 decodes to.
func unsafeRune(r rune) bool {
	switch {
	case unicode.IsControl(r), r == '\u2028', r == '\u2029', r == unicode.ReplacementChar:
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f':
		return true
	}
	return false
}

// suffixed matches a segment that may be a duplicate's name: " (N)"
// before the extension or at the end.
var suffixed = regexp.MustCompile(` \([0-9]+\)`)

// plain reports whether seg can only be the name of a row named exactly
// seg, the first such in its folder's order: it holds none of the runes
// Segment substitutes and no duplicate's suffix.
func plain(seg string) bool {
	return !strings.ContainsAny(seg, string([]rune{slashRune, backslashRune, controlRune, dotRune})) &&
		!suffixed.MatchString(seg)
}

// uniqueNames returns the names of a folder's entries whose safe segments
// are segs, in the folder's order: an entry keeps its segment when no
// earlier entry has the same one; a later entry with the same segment
// gets the first free " (N)", N from 2, before its extension (files) or
// at the end (folders). Names differing only in case are distinct, as on
// a Linux file system. The result depends only on segs and their order.
func uniqueNames(segs []string, files bool) []string {
	out := make([]string, len(segs))
	taken := make(map[string]bool, len(segs))
	for i, s := range segs {
		if !taken[s] {
			taken[s], out[i] = true, s
		}
	}
	next := map[string]int{}
	for i, s := range segs {
		if out[i] != "" {
			continue
		}
		for n := max(next[s], 2); ; n++ {
			name := withSuffix(s, n, files)
			if !taken[name] {
				taken[name], out[i], next[s] = true, name, n+1
				break
			}
		}
	}
	return out
}

// withSuffix returns seg with " (n)" before its extension (a file's, when
// it has one of at most 10 bytes and a stem) or at its end.
func withSuffix(seg string, n int, files bool) string {
	stem, ext := seg, ""
	if files {
		if e := path.Ext(seg); e != "" && len(e) <= 10 && len(e) < len(seg) {
			stem, ext = seg[:len(seg)-len(e)], e
		}
	}
	return stem + " (" + strconv.Itoa(n) + ")" + ext
}
