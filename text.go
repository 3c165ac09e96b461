package hoard

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of platform text as stored, in characters: the schema's length
// CHECKs, and below what a b-tree index entry holds (about 2,700 bytes:
// MaxStoredBytes caps every indexed value, whatever its characters).
const (
	// MaxFileNameLen is packages.file_name's CHECK (1 to 1,024).
	MaxFileNameLen = 1024
	// MaxTitleLen bounds channel and topic titles and names of users (the
	// platform allows 128; hostile servers or seeds may send more).
	MaxTitleLen = 256
	// MaxCreatorLen bounds a package's creator (indexed by lower(creator)).
	MaxCreatorLen = 256
	// MaxCaptionLen bounds captions and message texts (the platform allows
	// 4,096; tsvector and the search index stay small).
	MaxCaptionLen = 8192
	// MaxEntryPathLen is preview_extractions.entry_path's CHECK (1 to
	// 4,096): a stored entry path can always be chosen as a preview.
	MaxEntryPathLen = 4096
	// MaxStoredBytes caps values that sit in a b-tree index (file names,
	// creators): 1,024 four-byte characters would not fit in one entry.
	MaxStoredBytes = 2000
)

// replacement stands for what could not be stored (NUL, invalid UTF-8).
const replacement = "\uFFFD"

// StorableText returns s in a form every store method accepts: each NUL
// and each byte of invalid UTF-8 replaced by U+FFFD, then cut to at most
// maxLen characters and MaxStoredBytes bytes on a character boundary (a
// UTF-8 sequence is never split). maxLen ≤ 0 means no character bound.
// Everything else — direction overrides, other controls — is kept: display
// neutralises them (DisplayText), the stored text stays what was posted.
// It is idempotent and allocates nothing for text that needs no change.
func StorableText(s string, maxLen int) string {
	return cutText(validText(s), maxLen, MaxStoredBytes)
}

// StorableLongText is StorableText for text that sits in no b-tree index
// (captions, archive entry paths): bounded to maxLen characters only.
func StorableLongText(s string, maxLen int) string {
	return cutText(validText(s), maxLen, 0)
}

// StorableFileName is StorableText for a file name: one cut to fit keeps
// its extensions (from the first dot among the last 24 characters) after an
// ellipsis, so that the type and the part number a name tells survive
// ("aaa…aaa….part01.rar"). A name that is empty after trimming becomes
// "unnamed".
func StorableFileName(name string) string {
	name = validText(name)
	if strings.TrimSpace(name) == "" {
		return "unnamed"
	}
	if fits(name, MaxFileNameLen, MaxStoredBytes) {
		return name
	}
	ext := extensions(name)
	const ellipsis = "…"
	stem := cutText(strings.TrimSuffix(name, ext), MaxFileNameLen-utf8.RuneCountInString(ext)-1,
		MaxStoredBytes-len(ext)-len(ellipsis))
	return stem + ellipsis + ext
}

// extensions is the tail of a name from the first dot among its last 24
// characters ("" when there is none).
func extensions(name string) string {
	tail := name
	if n := utf8.RuneCountInString(name); n > 24 {
		tail = string([]rune(name)[n-24:])
	}
	if i := strings.IndexByte(tail, '.'); i >= 0 {
		return tail[i:]
	}
	return ""
}

// validText replaces NUL and invalid UTF-8 by U+FFFD.
func validText(s string) string {
	if utf8.ValidString(s) && !strings.Contains(s, "\x00") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == 0:
			b.WriteString(replacement)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// fits reports whether s has at most maxLen characters (≤ 0: any) and
// maxBytes bytes (≤ 0: any).
func fits(s string, maxLen, maxBytes int) bool {
	return (maxBytes <= 0 || len(s) <= maxBytes) && (maxLen <= 0 || len(s) <= maxLen || utf8.RuneCountInString(s) <= maxLen)
}

// cutText cuts valid UTF-8 s to at most maxLen characters and maxBytes
// bytes (≤ 0: no bound) on a character boundary.
func cutText(s string, maxLen, maxBytes int) string {
	if fits(s, maxLen, maxBytes) {
		return s
	}
	n, end := 0, 0
	for i, r := range s {
		size := utf8.RuneLen(r)
		if (maxLen > 0 && n == maxLen) || (maxBytes > 0 && i+size > maxBytes) {
			break
		}
		n, end = n+1, i+size
	}
	return s[:end]
}

// DisplayText returns platform text (file names, captions, titles,
// creators, archive entry paths) safe to show to a person: every Unicode
// direction control (U+202A–U+202E, U+2066–U+2069, the marks U+200E,
// U+200F and U+061C) and every other invisible control character is shown
// as U+FFFD, so that no name can reorder or hide what follows it
// ("invoice\u202Egpj.exe" does not pass for "invoiceexe.jpg"). Line breaks
// and tabs stay; so do the joiners and emoji tag characters that emoji
// sequences need (U+200C, U+200D, U+E0020–U+E007F) and variation selectors.
// Invalid UTF-8 becomes U+FFFD. Web pages (the "display" template function)
// and bot replies use it; the stored text keeps what was posted.
func DisplayText(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || hiddenRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == utf8.RuneError || hiddenRune(r) {
			b.WriteString(replacement)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hiddenRune reports the characters DisplayText neutralises: control (Cc)
// and format (Cf) characters, line and paragraph separators, except tab,
// line feed, the zero-width joiners and emoji tag characters.
func hiddenRune(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r == '\u200C' || r == '\u200D':
		return false
	case r >= 0xE0020 && r <= 0xE007F:
		return false
	case r == '\u2028' || r == '\u2029':
		return true
	}
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r)
}
