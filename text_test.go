package hoard

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStorableText(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		maxLen int
		want   string
	}{
		{"plain", "Dragon Bust.zip", 100, "Dragon Bust.zip"},
		{"NUL", "evil\x00nul.stl", 100, "evil\uFFFDnul.stl"},
		{"invalid UTF-8", "caf\xe9 \xff\xfe.zip", 100, "caf\uFFFD \uFFFD\uFFFD.zip"},
		{"truncated sequence", "ab\xe2\x82", 100, "ab\uFFFD\uFFFD"},
		{"direction override kept", "a\u202Egpj.exe", 100, "a\u202Egpj.exe"},
		{"cut to characters", "ééééé", 3, "ééé"},
		{"no character bound", "abc", 0, "abc"},
		{"cut never splits a sequence", strings.Repeat("😀", 600), 0, strings.Repeat("😀", MaxStoredBytes/4)},
		{"bytes bound before characters", strings.Repeat("€", 1000), 1000, strings.Repeat("€", MaxStoredBytes/3)},
		{"empty", "", 10, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StorableText(tt.in, tt.maxLen); got != tt.want {
				t.Errorf("StorableText(%q, %d) = %q, want %q", tt.in, tt.maxLen, got, tt.want)
			}
		})
	}
}

func TestStorableLongText(t *testing.T) {
	long := strings.Repeat("€", 5000)
	tests := []struct {
		in     string
		maxLen int
		want   string
	}{
		{long, MaxEntryPathLen, strings.Repeat("€", MaxEntryPathLen)},
		{"dir/\x00x\xff.png", MaxEntryPathLen, "dir/\uFFFDx\uFFFD.png"},
		{long, 0, long},
	}
	for _, tt := range tests {
		if got := StorableLongText(tt.in, tt.maxLen); got != tt.want {
			t.Errorf("StorableLongText(%.20q…, %d) = %.20q… (%d chars), want %d chars", tt.in, tt.maxLen, got,
				utf8.RuneCountInString(got), utf8.RuneCountInString(tt.want))
		}
	}
}

func TestStorableFileName(t *testing.T) {
	type result struct {
		Len    int
		Suffix string
		Prefix string
	}
	summary := func(s string) result {
		r := []rune(s)
		return result{Len: len(r), Suffix: string(r[max(0, len(r)-5):]), Prefix: string(r[:min(3, len(r))])}
	}
	tests := []struct {
		name string
		in   string
		want result
	}{
		{"short name unchanged", "Pack.zip", result{8, "k.zip", "Pac"}},
		{"3000 characters keep the extension", strings.Repeat("a", 2996) + ".zip", result{MaxFileNameLen, "….zip", "aaa"}},
		{"multi-part extension kept", strings.Repeat("b", 3000) + ".part01.rar", result{MaxFileNameLen, "1.rar", "bbb"}},
		{"wide characters: bytes bound", strings.Repeat("🐉", 1500) + ".stl", result{(MaxStoredBytes-4-3)/4 + 5, "….stl", "🐉🐉🐉"}},
		{"a very long extension is not kept", "x." + strings.Repeat("y", 2000), result{MaxFileNameLen, "yyyy…", "x.y"}},
		{"byte-split extension kept", strings.Repeat("c", 2000) + ".zip.001", result{MaxFileNameLen, "p.001", "ccc"}},
		{"NUL replaced", "evil\x00nul.stl", result{12, "l.stl", "evi"}},
		{"empty becomes unnamed", "", result{7, "named", "unn"}},
		{"blank becomes unnamed", "  \t", result{7, "named", "unn"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StorableFileName(tt.in)
			if s := summary(got); s != tt.want {
				t.Errorf("StorableFileName: %+v, want %+v", s, tt.want)
			}
			if len(got) > MaxStoredBytes || !utf8.ValidString(got) || StorableFileName(got) != got {
				t.Errorf("StorableFileName(%.20q…) = %.40q…: %d bytes, valid %v, idempotent %v", tt.in, got, len(got),
					utf8.ValidString(got), StorableFileName(got) == got)
			}
		})
	}
}

func TestDisplayText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "Dragon Bust v2.zip", "Dragon Bust v2.zip"},
		{"right-to-left override", "invoice\u202Egpj.exe", "invoice\uFFFDgpj.exe"},
		{"every embedding and override", "\u202A\u202B\u202C\u202D\u202E", strings.Repeat("\uFFFD", 5)},
		{"isolates", "a\u2066b\u2067c\u2068d\u2069", "a\uFFFDb\uFFFDc\uFFFDd\uFFFD"},
		{"marks", "x\u200E\u200F\u061Cy", "x\uFFFD\uFFFD\uFFFDy"},
		{"zero width space and BOM", "a\u200Bb\uFEFFc\u2060d", "a\uFFFDb\uFFFDc\uFFFDd"},
		{"C0 and C1 controls", "a\x01b\x1bc\u0085d\x7f", "a\uFFFDb\uFFFDc\uFFFDd\uFFFD"},
		{"line separators", "a\u2028b\u2029c", "a\uFFFDb\uFFFDc"},
		{"line breaks and tabs stay", "line 1\nline 2\tend", "line 1\nline 2\tend"},
		{"emoji joiners stay", "👨\u200D👩\u200D👧 ❤\uFE0F", "👨\u200D👩\u200D👧 ❤\uFE0F"},
		{"emoji tag sequence stays", "🏴\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F", "🏴\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"right-to-left text stays", "שלום.zip", "שלום.zip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DisplayText(tt.in); got != tt.want {
				t.Errorf("DisplayText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzStorableText checks the sanitisers' contract on any input: valid
// UTF-8 without NUL, within the bounds, a prefix of the replaced text
// (nothing but the cut changes), idempotent; and that DisplayText leaves no
// direction control.
func FuzzStorableText(f *testing.F) {
	for _, s := range []string{"", "plain.zip", "evil\x00nul.stl", "\xff\xfe\xe2\x82", "a\u202Eb", strings.Repeat("😀", 700)} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, s string, maxLen int) {
		maxLen %= 3000
		for _, got := range []string{StorableText(s, maxLen), StorableLongText(s, maxLen), StorableFileName(s)} {
			if !utf8.ValidString(got) || strings.ContainsRune(got, 0) {
				t.Fatalf("not storable: %q → %q", s, got)
			}
		}
		got := StorableText(s, maxLen)
		if len(got) > MaxStoredBytes || (maxLen > 0 && utf8.RuneCountInString(got) > maxLen) {
			t.Fatalf("StorableText(%q, %d) = %q: over the bounds", s, maxLen, got)
		}
		if !strings.HasPrefix(validText(s), got) || StorableText(got, maxLen) != got {
			t.Fatalf("StorableText(%q, %d) = %q: not a prefix of the replaced text, or not idempotent", s, maxLen, got)
		}
		name := StorableFileName(s)
		if len(name) > MaxStoredBytes || utf8.RuneCountInString(name) > MaxFileNameLen || name == "" || StorableFileName(name) != name {
			t.Fatalf("StorableFileName(%q) = %q: over the bounds, empty or not idempotent", s, name)
		}
		shown := DisplayText(s)
		if !utf8.ValidString(shown) || strings.ContainsFunc(shown, func(r rune) bool {
			return r >= '\u202A' && r <= '\u202E' || r >= '\u2066' && r <= '\u2069'
		}) {
			t.Fatalf("DisplayText(%q) = %q: direction controls left", s, shown)
		}
	})
}

// BenchmarkStorableText measures the sanitiser on the common case (clean
// text: no copy) and on hostile text (a copy with replacements and a cut).
func BenchmarkStorableText(b *testing.B) {
	for _, bm := range []struct{ name, in string }{
		{"clean", "Mammoth Factory - 2024-01 Sabertooth Cat.zip"},
		{"hostile", strings.Repeat("evil\x00nul\xff\u202E", 300)},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = StorableFileName(bm.in)
				_ = DisplayText(bm.in)
			}
		})
	}
}
