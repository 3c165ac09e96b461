package zipstream

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// maxNameLen is the longest name in bytes: most file systems refuse a
	// path component longer than 255 bytes, and the archive is extracted
	// on the user's machine.
	maxNameLen = 255
	// maxExtLen bounds what counts as an extension, so that a name like
	// "a.<300 bytes>" is cut in its tail instead of losing its whole stem.
	maxExtLen = 32
	// fallbackName replaces a name that is empty once made safe.
	fallbackName = "file"
)

// SafeName returns name as a single file name that is safe to extract
// anywhere: the last non-empty '/'-separated component, with backslashes,
// control and bidirectional-override characters and the characters Windows
// refuses (<>:"|?*) replaced by '_', invalid UTF-8 replaced by '_', runs of
// dots collapsed to one (so ".." never appears), surrounding spaces and
// trailing dots trimmed, Windows device names (CON, NUL, COM1…) prefixed with
// '_', cut to 255 bytes keeping a short extension, and "file" if nothing is
// left. SafeName is idempotent; it does not make names unique (New does).
func SafeName(name string) string {
	name = strings.ToValidUTF8(name, "_")
	name = lastComponent(name)
	name = strings.Map(safeRune, name)
	name = collapseDots(name)
	name = trimName(name)
	if isDeviceName(name) {
		name = "_" + name
	}
	stem, ext := splitExt(name)
	return joinName(stem, "", ext)
}

// lastComponent returns the last non-empty '/'-separated part of name, or ""
// when there is none: the archive is flat, so directories in a catalog name
// are dropped rather than recreated on the user's disk.
func lastComponent(name string) string {
	name = strings.TrimRight(name, "/")
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// safeRune maps the runes that could escape the extraction directory,
// confuse a terminal or a file manager, or be refused by Windows to '_'.
func safeRune(r rune) rune {
	switch {
	case r == '\\', r == '/', unicode.IsControl(r), isBidiControl(r):
		return '_'
	case strings.ContainsRune(`<>:"|?*`, r):
		return '_'
	}
	return r
}

// isBidiControl reports whether r reorders the text around it, which lets a
// name like "gpj.exe" display as "exe.jpg".
func isBidiControl(r rune) bool {
	return r == '\u061c' || r == '\u200e' || r == '\u200f' ||
		(r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069')
}

// collapseDots replaces every run of dots by a single dot, so that no part
// of the name can be read as "..".
func collapseDots(name string) string {
	if !strings.Contains(name, "..") {
		return name
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		if name[i] == '.' && i > 0 && name[i-1] == '.' {
			continue
		}
		b.WriteByte(name[i])
	}
	return b.String()
}

// trimName removes leading spaces and trailing spaces and dots, which
// Windows drops silently (turning two distinct names into one).
func trimName(name string) string {
	name = strings.TrimLeftFunc(name, unicode.IsSpace)
	return strings.TrimRightFunc(name, func(r rune) bool { return r == '.' || unicode.IsSpace(r) })
}

// isDeviceName reports whether Windows would open a device instead of a file
// for name: CON, PRN, AUX, NUL, COM0-9 and LPT0-9, with any extension.
func isDeviceName(name string) bool {
	stem, _, _ := strings.Cut(name, ".")
	stem = strings.ToUpper(strings.TrimRightFunc(stem, unicode.IsSpace))
	switch stem {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	return len(stem) == 4 && (strings.HasPrefix(stem, "COM") || strings.HasPrefix(stem, "LPT")) &&
		stem[3] >= '0' && stem[3] <= '9'
}

// splitExt splits a safe name into its stem and its extension (with the
// dot). A leading dot (".gitignore") and an extension longer than maxExtLen
// or containing a space belong to the stem.
func splitExt(name string) (stem, ext string) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || len(name)-i > maxExtLen || strings.ContainsFunc(name[i:], unicode.IsSpace) {
		return name, ""
	}
	return name[:i], name[i:]
}

// joinName returns stem+suffix+ext cut to maxNameLen bytes by shortening
// the stem at a rune boundary; the stem is trimmed again after the cut so
// that it cannot end in a dot next to the extension's. An empty result is
// fallbackName.
func joinName(stem, suffix, ext string) string {
	if room := maxNameLen - len(suffix) - len(ext); len(stem) > room {
		cut := max(room, 0)
		for cut > 0 && !utf8.RuneStart(stem[cut]) {
			cut--
		}
		stem = trimName(stem[:cut])
	}
	if stem == "" {
		if suffix == "" && ext == "" {
			return fallbackName
		}
		stem = fallbackName
	}
	return stem + suffix + ext
}

// uniqueNames returns safe names made unique in order: the first keeps its
// name, later ones get " (2)", " (3)"… before the extension. Names are
// compared case-insensitively because Windows and macOS file systems would
// otherwise overwrite one file with another on extraction.
func uniqueNames(names []string) []string {
	out := make([]string, len(names))
	taken := make(map[string]bool, len(names))
	next := make(map[string]int) // the next suffix to try per folded name
	for i, name := range names {
		key := strings.ToLower(name)
		if !taken[key] {
			taken[key] = true
			out[i] = name
			continue
		}
		stem, ext := splitExt(name)
		k := max(next[key], 2)
		cand := joinName(stem, " ("+strconv.Itoa(k)+")", ext)
		for taken[strings.ToLower(cand)] {
			k++
			cand = joinName(stem, " ("+strconv.Itoa(k)+")", ext)
		}
		next[key] = k + 1
		taken[strings.ToLower(cand)] = true
		out[i] = cand
	}
	return out
}
