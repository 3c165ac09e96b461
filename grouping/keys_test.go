package grouping

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPatternKey(t *testing.T) {
	tests := []struct{ name, want string }{
		{"Mammoth Factory - 2024-01.zip", "2024-01"},
		{"MF_2024_12_Dragon.rar", "2024-12"},
		{"pack 2023.07.7z", "2023-07"},
		{"Release 2024-01-15.zip", "2024-01"},
		{"2024-13 bad month.zip", ""},
		{"12024-01.zip", ""},
		{"v2024-011.zip", ""},
		{"1900-01 too old.zip", ""},
		{"January 2024 Release.zip", "2024-01"},
		{"release_jan_2024.rar", "2024-01"},
		{"Sept2023.zip", "2023-09"},
		{"2022 December bundle.zip", "2022-12"},
		{"May the force.zip", ""},
		{"Project Titan - Part A.zip", "project titan"},
		{"Project_Titan (Supported).7z", "project titan"},
		{"Hero – Knight.zip", ""}, // prefix under 5 chars
		{"Heroic Legends – Knight.zip", "heroic legends"},
		{"(Supported) Dragon.zip", ""}, // nothing before "("
		{"Dragon.part01.rar", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PatternKey(tt.name); got != tt.want {
				t.Errorf("PatternKey(%q) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

func TestCaptionKey(t *testing.T) {
	tests := []struct{ caption, want string }{
		{"Dragon Lord Collection", "collection dragon lord"},
		{"🔥 DRAGON-lord collection.zip 🔥", "collection dragon lord"},
		{"Dragon Lord.part1.rar", "dragon lord"},
		{"The files for the dragon", ""}, // one significant word
		{"Dragon dragon DRAGON", ""},     // one distinct word
		{"ab cd ef", ""},                 // all words too short
		{"Drache Ritter Sammlung", "drache ritter sammlung"},
		{"Дракон Рыцарь", "дракон рыцарь"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.caption, func(t *testing.T) {
			if got := CaptionKey(tt.caption); got != tt.want {
				t.Errorf("CaptionKey(%q) = %q, want %q", tt.caption, got, tt.want)
			}
		})
	}
}

func TestRootFolder(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		want  string
	}{
		{"dominant", []string{"Titan/a.stl", "Titan/b.stl", "c.txt"}, "Titan"},
		{"exactly half is not dominant", []string{"Titan/a.stl", "c.txt"}, ""},
		{"noise ignored", []string{"__MACOSX/x", "Titan/.DS_Store", "Titan/a.stl", "Thumbs.db", "x/._a.stl", "desktop.ini"}, "Titan"},
		{"backslashes and leading ./", []string{".\\Titan\\a.stl", "/Titan/b.stl"}, "Titan"},
		{"case-insensitive, first casing", []string{"titan/a.stl", "TITAN/b.stl"}, "titan"},
		{"files at root only", []string{"a.stl", "b.stl"}, ""},
		{"too short", []string{"ab/a.stl"}, ""},
		{"generic", []string{"Supported/a.stl", "supported/b.stl"}, ""},
		{"empty", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RootFolder(tt.paths); got != tt.want {
				t.Errorf("RootFolder(%q) = %q, want %q", tt.paths, got, tt.want)
			}
		})
	}
}

func TestNameFor(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  string
	}{
		{"common prefix cut to a word", []string{"Dragon Lord 01.zip", "dragon lord 02.zip"}, "Dragon Lord"},
		{"separators trimmed", []string{"Dragon_Lord_A.zip", "Dragon_Lord_B.zip"}, "Dragon_Lord"},
		{"prefix inside a word kept when the cut is too short", []string{"Dragonfly.zip", "Dragonborn.zip"}, "Dragon"},
		{"too short: first file name", []string{"Orc.zip", "Ogre.zip"}, "Orc"},
		{"one member", []string{"Knight (Supported).7z"}, "Knight (Supported)"},
		{"unknown extension", []string{"notes.md"}, "notes"},
		{"multi-byte", []string{"Дракон один.zip", "дракон два.zip"}, "Дракон"},
		{"none", nil, "Unnamed group"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m []Package
			for i, f := range tt.files {
				m = append(m, Package{ID: int64(i + 1), FileName: f})
			}
			if got := NameFor(m); got != tt.want {
				t.Errorf("NameFor(%q) = %q, want %q", tt.files, got, tt.want)
			}
		})
	}
}

func TestLearnRule(t *testing.T) {
	tests := []struct {
		name    string
		members []Package
		want    Rule
		ok      bool
	}{
		{
			name:    "common prefix, cut to a word boundary",
			members: []Package{{ID: 1, FileName: "Dragon_Lord_01.zip"}, {ID: 2, FileName: "DRAGON LORD 02.rar"}},
			want:    Rule{Kind: RulePrefix, Pattern: "dragon lord", Confidence: 0.82},
			ok:      true,
		},
		{
			name:    "prefix inside a word",
			members: []Package{{ID: 1, FileName: "Dragonfly.zip"}, {ID: 2, FileName: "Dragonborn.zip"}},
			want:    Rule{Kind: RulePrefix, Pattern: "dragon", Confidence: 0.72},
			ok:      true,
		},
		{
			name:    "long prefix caps at 1",
			members: []Package{{ID: 1, FileName: "Mammoth Factory Ultimate Dragon Collection A.zip"}, {ID: 2, FileName: "Mammoth Factory Ultimate Dragon Collection B.zip"}},
			want:    Rule{Kind: RulePrefix, Pattern: "mammoth factory ultimate dragon collection", Confidence: 1},
			ok:      true,
		},
		{
			name:    "short prefix: shared creator",
			members: []Package{{ID: 1, FileName: "Orc.zip", Creator: " Mammoth Factory"}, {ID: 2, FileName: "Ogre.zip", Creator: "mammoth factory"}},
			want:    Rule{Kind: RuleCreator, Pattern: "Mammoth Factory", Confidence: 0.5},
			ok:      true,
		},
		{
			name:    "short prefix, different creators",
			members: []Package{{ID: 1, FileName: "Orc.zip", Creator: "A"}, {ID: 2, FileName: "Ogre.zip", Creator: "B"}},
		},
		{
			name:    "short prefix, no creator",
			members: []Package{{ID: 1, FileName: "Orc.zip"}, {ID: 2, FileName: "Ogre.zip"}},
		},
		{
			name:    "one member teaches nothing",
			members: []Package{{ID: 1, FileName: "Dragon Lord.zip", Creator: "X"}},
		},
		{
			name:    "a nameless member: creator only",
			members: []Package{{ID: 1, FileName: "Dragon Lord.zip", Creator: "X Y"}, {ID: 2, Creator: "x_y"}},
			want:    Rule{Kind: RuleCreator, Pattern: "X Y", Confidence: 0.5},
			ok:      true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := LearnRule(tt.members)
			if ok != tt.ok || got != tt.want {
				t.Errorf("LearnRule = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
			if !ok {
				return
			}
			// A learned rule matches every member it was learned from.
			for _, p := range tt.members {
				if !got.Matches(p) && !(got.Kind == RulePrefix && p.FileName == "") {
					t.Errorf("rule %+v does not match member %q", got, p.FileName)
				}
			}
			// Input order does not matter.
			rev := slices.Clone(tt.members)
			slices.Reverse(rev)
			if again, _ := LearnRule(rev); again != got {
				t.Errorf("reversed members: %+v", again)
			}
		})
	}
}

func TestRuleMatches(t *testing.T) {
	tests := []struct {
		rule Rule
		pkg  Package
		want bool
	}{
		{Rule{Kind: RulePrefix, Pattern: "dragon lord"}, Package{FileName: "Dragon-Lord_03.zip"}, true},
		{Rule{Kind: RulePrefix, Pattern: "dragon lord"}, Package{FileName: "The Dragon Lord.zip"}, false},
		{Rule{Kind: RuleCreator, Pattern: "Mammoth Factory"}, Package{Creator: "mammoth_factory"}, true},
		{Rule{Kind: RuleCreator, Pattern: "Mammoth"}, Package{Creator: "Mammoth Factory"}, false},
		{Rule{Kind: "OTHER", Pattern: "x"}, Package{FileName: "x.zip", Creator: "x"}, false},
		{Rule{Kind: RulePrefix, Pattern: ""}, Package{FileName: "x.zip"}, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.rule.Kind)+"/"+tt.rule.Pattern+"/"+tt.pkg.FileName+tt.pkg.Creator, func(t *testing.T) {
			if got := tt.rule.Matches(tt.pkg); got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}

// FuzzKeys: key extraction never panics, is deterministic and keeps its
// output format.
func FuzzKeys(f *testing.F) {
	for _, s := range []string{
		"Mammoth Factory - 2024-01 - Dragon.zip", "release_jan_2024.rar", "Project (A).7z", "🔥 DRAGON-lord collection.zip",
		"Pack.7z.001", "Titan/a.stl|__MACOSX/._x|b.txt", "\xff\xfe2024-1", "sept2099", "a.part999999.rar", "",
	} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, name, caption string) {
		k := PatternKey(name)
		if k != PatternKey(name) {
			t.Fatal("PatternKey not deterministic")
		}
		if isDateKey(k) {
			if k < "1950-01" || k > "2099-12" || k[5:] < "01" || k[5:] > "12" {
				t.Fatalf("bad date key %q", k)
			}
		} else if k != "" && (k != normalize(k) || utf8.RuneCountInString(k) < 5) {
			t.Fatalf("bad prefix key %q", k)
		}
		c := CaptionKey(caption)
		if c != CaptionKey(caption) {
			t.Fatal("CaptionKey not deterministic")
		}
		if c != "" {
			w := strings.Split(c, " ")
			if len(w) < 2 || !slices.IsSorted(w) || len(slices.Compact(slices.Clone(w))) != len(w) {
				t.Fatalf("bad caption key %q", c)
			}
		}
		if h, n := normHead(name); len(normalize(name)) >= 2 && (n != 2 || string(h[:]) != normalize(name)[:2]) {
			t.Fatalf("normHead(%q) = %q, normalize = %q", name, h[:n], normalize(name))
		}
		paths := strings.Split(name, "|")
		if first, second := RootFolder(paths), RootFolder(slices.Clone(paths)); first != second {
			t.Fatal("RootFolder not deterministic")
		}
		m := []Package{{ID: 1, FileName: name, Creator: caption}, {ID: 2, FileName: caption, Creator: name}}
		if NameFor(m) == "" {
			t.Fatal("empty name")
		}
		if r, ok := LearnRule(m); ok && !r.Matches(m[0]) && m[0].FileName != "" && r.Kind == RulePrefix {
			t.Fatalf("learned %+v does not match its member %q", r, name)
		}
	})
}
