package zipstream

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSafeName(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		name, in, want string
	}{
		{"plain", "model.stl", "model.stl"},
		{"empty", "", "file"},
		{"spaces only", "   ", "file"},
		{"dot", ".", "file"},
		{"dotdot", "..", "file"},
		{"traversal", "../../etc/passwd", "passwd"},
		{"absolute", "/etc/passwd", "passwd"},
		{"trailing slash", "dir/sub/", "sub"},
		{"only slashes", "///", "file"},
		{"dir then dotdot", "dir/..", "file"},
		{"windows traversal", `..\..\windows\win.ini`, "._._windows_win.ini"},
		{"drive", `C:\Users\x.txt`, "C__Users_x.txt"},
		{"drive relative", "C:x.txt", "C_x.txt"},
		{"unc", `\\server\share\f.stl`, "__server_share_f.stl"},
		{"inner dots", "a..b...c.stl", "a.b.c.stl"},
		{"trailing dots and spaces", "  name. . ", "name"},
		{"hidden file kept", ".gitignore", ".gitignore"},
		{"control chars", "a\x00b\x1fc\x7fd\u0085e.txt", "a_b_c_d_e.txt"},
		{"newline", "evil\nname.txt", "evil_name.txt"},
		{"bidi override", "photo\u202egpj.exe", "photo_gpj.exe"},
		{"windows reserved chars", `a<b>c:d"e|f?g*h.stl`, "a_b_c_d_e_f_g_h.stl"},
		{"device name", "con.txt", "_con.txt"},
		{"device name upper", "LPT1", "_LPT1"},
		{"not a device", "console.txt", "console.txt"},
		{"invalid utf8", "a\xff\xfeb.stl", "a_b.stl"},
		{"unicode kept", "模型 – ü.obj", "模型 – ü.obj"},
		{"long keeps extension", long + ".stl", strings.Repeat("x", 251) + ".stl"},
		{"long without extension", long, strings.Repeat("x", 255)},
		{"long multibyte cut at rune", strings.Repeat("é", 200) + ".stl", strings.Repeat("é", 125) + ".stl"},
		{"long cut ends in dot", strings.Repeat("x", 250) + ".y.zzz" + strings.Repeat("w", 10) + ".c", strings.Repeat("x", 250) + ".y.c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SafeName(tt.in); got != tt.want {
				t.Errorf("SafeName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestUniqueNames(t *testing.T) {
	tests := []struct {
		name     string
		in, want []string
	}{
		{"distinct", []string{"a.zip", "b.zip"}, []string{"a.zip", "b.zip"}},
		{"duplicates", []string{"a.zip", "a.zip", "a.zip"}, []string{"a.zip", "a (2).zip", "a (3).zip"}},
		{"case-insensitive", []string{"A.zip", "a.ZIP"}, []string{"A.zip", "a (2).ZIP"}},
		{"suffix already taken", []string{"a (2).zip", "a.zip", "a.zip"}, []string{"a (2).zip", "a.zip", "a (3).zip"}},
		{"later literal clash", []string{"a.zip", "a.zip", "a (2).zip"}, []string{"a.zip", "a (2).zip", "a (2) (2).zip"}},
		{"no extension", []string{"file", "file"}, []string{"file", "file (2)"}},
		{"hidden", []string{".env", ".env"}, []string{".env", ".env (2)"}},
		{"long", []string{strings.Repeat("x", 251) + ".stl", strings.Repeat("x", 251) + ".stl"},
			[]string{strings.Repeat("x", 251) + ".stl", strings.Repeat("x", 247) + " (2).stl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := uniqueNames(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("uniqueNames(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestUniqueNamesMany checks that many equal names stay linear: each
// duplicate starts from the previous suffix instead of from 2.
func TestUniqueNamesMany(t *testing.T) {
	names := make([]string, 100_000)
	for i := range names {
		names[i] = "same.stl"
	}
	got := uniqueNames(names)
	if got[99_999] != "same (100000).stl" {
		t.Fatalf("last name %q", got[99_999])
	}
}

// checkSafeNames fails unless names are safe, non-empty and unique
// (case-insensitively).
func checkSafeNames(t *testing.T, in, names []string) {
	t.Helper()
	seen := map[string]bool{}
	for i, n := range names {
		bad := n == "" || len(n) > maxNameLen || !utf8.ValidString(n) ||
			strings.ContainsAny(n, `/\`) || strings.Contains(n, "..") ||
			strings.ContainsFunc(n, func(r rune) bool { return unicode.IsControl(r) || isBidiControl(r) }) ||
			isDeviceName(n) || seen[strings.ToLower(n)]
		if bad {
			t.Fatalf("name %q (from %q) is unsafe or a duplicate", n, in[i])
		}
		seen[strings.ToLower(n)] = true
	}
}

func FuzzNames(f *testing.F) {
	for _, s := range []string{"", ".", "..", "../a", `a\..\b`, "a..zip", "con.txt", "a (2).zip", "\x00", "é\xff", strings.Repeat("a.", 200)} {
		f.Add(s, "a.zip", "A.ZIP")
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		in := []string{a, b, c, a, b, c, a + " (2)", SafeName(a), strings.ToUpper(b)}
		safe := make([]string, len(in))
		for i, n := range in {
			safe[i] = SafeName(n)
			if again := SafeName(safe[i]); again != safe[i] {
				t.Fatalf("SafeName not idempotent: %q -> %q -> %q", n, safe[i], again)
			}
		}
		checkSafeNames(t, in, uniqueNames(safe))
		entries := make([]Entry, len(in))
		for i, n := range in {
			entries[i] = Entry{Name: n}
		}
		arch, err := New(entries)
		if err != nil {
			t.Fatal(err)
		}
		checkSafeNames(t, in, arch.Names())
	})
}
