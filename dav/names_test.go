package dav

import (
	"reflect"
	"testing"
)

func TestSegment(t *testing.T) {
	tests := []struct {
		name, want string
	}{
		{"dragon.zip", "dragon.zip"},
		{"../x", "..∕x"},
		{"a/b", "a∕b"},
		{`a\b`, "a⧵b"},
		{"/", "∕"},
		{".", "․"},
		{"..", "․․"},
		{"...", "..."},
		{"", "�"},
		{"tab\there", "tab�here"},
		{"nul\x00del\x7f", "nul�del�"},
		{"line\u2028break", "line�break"},
		{"evil\u202egpj.exe", "evil�gpj.exe"},
		{"bad\xffutf8", "bad�utf8"},
		{"Ωmega (v2) ünïcødé.stl", "Ωmega (v2) ünïcødé.stl"},
	}
	for _, tt := range tests {
		if got := Segment(tt.name); got != tt.want {
			t.Errorf("Segment(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPlain(t *testing.T) {
	tests := []struct {
		seg  string
		want bool
	}{
		{"Alice", true},
		{"dragon.zip", true},
		{"Dragon (v2)", true},
		{"a∕b", false},
		{"a⧵b", false},
		{"tab�name", false},
		{"․․", false},
		{"Dup (2)", false},
		{"dragon (12).zip", false},
	}
	for _, tt := range tests {
		if got := plain(tt.seg); got != tt.want {
			t.Errorf("plain(%q) = %v, want %v", tt.seg, got, tt.want)
		}
	}
}

func TestUniqueNames(t *testing.T) {
	tests := []struct {
		name  string
		segs  []string
		files bool
		want  []string
	}{
		{"distinct", []string{"a.zip", "b.zip"}, true, []string{"a.zip", "b.zip"}},
		{"duplicates", []string{"a.zip", "a.zip", "a.zip"}, true, []string{"a.zip", "a (2).zip", "a (3).zip"}},
		{"case differs", []string{"A.zip", "a.zip"}, true, []string{"A.zip", "a.zip"}},
		{"a real name takes precedence", []string{"a.zip", "a.zip", "a (2).zip"}, true, []string{"a.zip", "a (3).zip", "a (2).zip"}},
		{"no extension", []string{"README", "README"}, true, []string{"README", "README (2)"}},
		{"dot file", []string{".hidden", ".hidden"}, true, []string{".hidden", ".hidden (2)"}},
		{"long extension is not one", []string{"a.verylongextension", "a.verylongextension"}, true,
			[]string{"a.verylongextension", "a.verylongextension (2)"}},
		{"volumes", []string{"set.part1.rar", "set.part1.rar"}, true, []string{"set.part1.rar", "set.part1 (2).rar"}},
		{"folders", []string{"Mr. Smith", "Mr. Smith"}, false, []string{"Mr. Smith", "Mr. Smith (2)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := uniqueNames(tt.segs, tt.files); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("uniqueNames(%q) = %q, want %q", tt.segs, got, tt.want)
			}
		})
	}
}
