package bot

import (
	"fmt"
	"strings"
	"testing"
)

func TestUTF16Len(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{{"", 0}, {"abc", 3}, {"é", 1}, {"📦", 2}, {"a📦b", 4}, {"日本", 2}} {
		if got := utf16Len(tc.s); got != tc.want {
			t.Errorf("utf16Len(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Dragon <b>&</b>", "Dragon &lt;b&gt;&amp;&lt;/b&gt;"},
		{"evil\u202Epiz.exe", "evil\uFFFDpiz.exe"},
		{"a\u2066b\u2069c\u200Fd", "a\uFFFDb\uFFFDc\uFFFDd"},
		{"plain", "plain"},
	} {
		if got := text(tc.in); got != tc.want {
			t.Errorf("text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCutText(t *testing.T) {
	for _, tc := range []struct {
		s     string
		limit int
		want  string
	}{
		{"short", 10, "short"},
		{"abcdefghij", 5, "abcd…"},
		{"📦📦📦", 4, "📦…"},
		{"ab&amp;cd", 5, "ab…"}, // never inside an entity
		{"ab&amp;cd", 8, "ab&amp;…"},
	} {
		got := cutText(tc.s, tc.limit)
		if got != tc.want || utf16Len(got) > tc.limit {
			t.Errorf("cutText(%q, %d) = %q, want %q", tc.s, tc.limit, got, tc.want)
		}
	}
}

func TestFitLines(t *testing.T) {
	lines := make([]string, 10)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d 📦", i) // 10 units each
	}
	for _, tc := range []struct {
		name  string
		limit int
		want  string
	}{
		{"all fit", 1000, "H\n" + strings.Join(lines, "\n") + "\nF"},
		{"cut with a note", 50, "H\nline 0 📦\nline 1 📦\nline 2 📦\n… and 7 more\nF"},
		{"only the note", 18, "H\n… and 10 more\nF"},
	} {
		got := fitLines("H\n", lines, "F", tc.limit)
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
		if utf16Len(got) > tc.limit {
			t.Errorf("%s: %d units, above the limit %d", tc.name, utf16Len(got), tc.limit)
		}
	}
}

// FuzzFitLines checks that whatever catalog text goes into a list, the
// message stays within the limit.
func FuzzFitLines(f *testing.F) {
	f.Add("Red Dragon.zip", "Castle 📦 &amp;", 200)
	f.Fuzz(func(t *testing.T, a, b string, limit int) {
		if limit < 40 || limit > 5000 {
			return
		}
		lines := []string{text(a), text(b), text(a + b)}
		if got := fitLines("head\n", lines, "\nfoot", limit); utf16Len(got) > limit {
			t.Fatalf("fitLines made %d units for a limit of %d", utf16Len(got), limit)
		}
	})
}

func TestSize(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1536, "1.5 KB"}, {5 << 20, "5.0 MB"}, {3 << 30, "3.0 GB"}} {
		if got := size(tc.n); got != tc.want {
			t.Errorf("size(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
