package bot

import (
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
)

// text makes catalog text (names, creators, tags, group names: they come
// from channels hoard does not control) safe to put in a reply: direction
// and other invisible controls neutralised (hoard.DisplayText), then
// HTML-escaped. Every piece of catalog text in a reply passes here.
func text(s string) string { return messenger.EscapeHTML(hoard.DisplayText(s)) }

// utf16Len is the length of s as the platform counts it: UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// fitLines joins head, as many lines as fit, and foot into a message of at
// most limit UTF-16 units (counting the HTML markup, which is more than
// the platform counts). Lines that do not fit are replaced by a note saying
// how many were left out. head and foot must leave room for that note.
func fitLines(head string, lines []string, foot string, limit int) string {
	var b strings.Builder
	b.WriteString(head)
	used := utf16Len(head) + utf16Len(foot)
	for i, l := range lines {
		rest := len(lines) - i - 1
		reserve := 0
		if rest > 0 {
			reserve = utf16Len(moreNote(rest)) + 1
		}
		if used+utf16Len(l)+1+reserve > limit {
			b.WriteString(moreNote(len(lines) - i))
			b.WriteString("\n")
			break
		}
		b.WriteString(l)
		b.WriteString("\n")
		used += utf16Len(l) + 1
	}
	b.WriteString(foot)
	return strings.TrimRight(b.String(), "\n")
}

func moreNote(n int) string { return fmt.Sprintf("… and %d more", n) }

// cutText cuts plain (already escaped) text to at most limit UTF-16 units,
// ending it with an ellipsis when it was cut. It never cuts inside an HTML
// entity.
func cutText(s string, limit int) string {
	if utf16Len(s) <= limit {
		return s
	}
	n := 0
	for i, r := range s {
		if n+utf16.RuneLen(r)+1 > limit {
			out := s[:i]
			if amp := strings.LastIndexByte(out, '&'); amp >= 0 && !strings.Contains(out[amp:], ";") {
				out = out[:amp]
			}
			return out + "…"
		}
		n += utf16.RuneLen(r)
	}
	return s
}

// size formats a byte count for people: 1 decimal in KB, MB and GB (1024-based).
func size(n int64) string {
	const k = 1024
	switch {
	case n < k:
		return fmt.Sprintf("%d B", n)
	case n < k*k:
		return fmt.Sprintf("%.1f KB", float64(n)/k)
	case n < k*k*k:
		return fmt.Sprintf("%.1f MB", float64(n)/(k*k))
	default:
		return fmt.Sprintf("%.1f GB", float64(n)/(k*k*k))
	}
}

// plural is "1 part", "3 parts".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
