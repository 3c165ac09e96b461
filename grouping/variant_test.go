package grouping

import (
	"testing"
	"time"
)

func TestVariantLabel(t *testing.T) {
	tests := []struct{ name, label, design string }{
		{"Wyvern Rider - Supported.zip", "supported", "Wyvern Rider"},
		{"Wyvern Rider - Unsupported.zip", "unsupported", "Wyvern Rider"},
		{"Winter Elves - Presupported.zip", "presupported", "Winter Elves"},
		{"Kraken Queen (Pre-Supported).zip", "presupported", "Kraken Queen"},
		{"Kraken Queen pre supported.7z", "presupported", "Kraken Queen"},
		{"Orc No Supports.zip", "unsupported", "Orc"},
		{"Sand Worm 75mm.zip", "75mm", "Sand Worm"},
		{"Sand Worm 120 mm.zip", "120mm", "Sand Worm"},
		{"Frost Giant v2.zip", "v2", "Frost Giant"},
		{"Frost Giant v1.1.zip", "v1.1", "Frost Giant"},
		{"Kraken Queen Remix.zip", "remix", "Kraken Queen"},
		{"Dragon_75mm_Supported_v2.rar", "75mm supported v2", "Dragon"},
		{"Wyvern Rider - Supported (reupload).zip", "supported", "Wyvern Rider"},
		{"Wyvern Rider (re-upload).zip", "", "Wyvern Rider"},
		{"Frost Giant Bust.zip", "", "Frost Giant Bust"}, // a bust is a model of its own
		{"Ironclad Terrain - 2024-03 - Bridge.zip", "", "Ironclad Terrain - 2024-03 - Bridge"},
		{"Giant Titan Part 2.zip", "", "Giant Titan Part 2"},
		{"Supported.zip", "supported", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := VariantLabel(tt.name); got != tt.label {
				t.Errorf("VariantLabel(%q) = %q, want %q", tt.name, got, tt.label)
			}
			if got := designName(tt.name); got != tt.design {
				t.Errorf("designName(%q) = %q, want %q", tt.name, got, tt.design)
			}
			// The key agrees with the display name.
			want := normalize(tt.design)
			if len([]rune(want)) < 3 {
				want = ""
			}
			if got := designKey(normalize(baseName(tt.name))); got != want {
				t.Errorf("designKey(%q) = %q, want %q", tt.name, got, want)
			}
		})
	}
}

func TestMayHoldVariant(t *testing.T) {
	for w := range variantWords {
		if !markerWord(w) {
			t.Errorf("markerWord(%q) = false", w)
		}
	}
	for w := range reuploadWords {
		if !markerWord(w) {
			t.Errorf("markerWord(%q) = false", w)
		}
	}
	for _, n := range []string{"dragon supported", "dragon pre supported", "dragon 75mm", "dragon 75 mm", "dragon v2",
		"dragon re upload", "dragon no supports", "dragon 42", "dragon 2024 01", "dragon", "v", "mm"} {
		words := normWords(n, nil)
		want := false
		for k := range words {
			if label, _, re := variantOf(words, k); label != "" || re {
				want = true
			}
		}
		if got := mayHoldVariant(n); got != want {
			t.Errorf("mayHoldVariant(%q) = %v, want %v", n, got, want)
		}
		if got := mayHoldVariantBytes([]byte(n)); got != want {
			t.Errorf("mayHoldVariantBytes(%q) = %v, want %v", n, got, want)
		}
	}
}

func TestGenericWordsCarryNoWeight(t *testing.T) {
	if k := CaptionKey("New release!"); k != "" {
		t.Errorf("CaptionKey(New release!) = %q", k)
	}
	if k := CaptionKey("Enjoy the new files"); k != "" {
		t.Errorf("CaptionKey(Enjoy the new files) = %q", k)
	}
	if k := CaptionKey("New release: Dragon Lord"); k == "" {
		t.Error("a caption that names something has a key")
	}
	if f := RootFolder([]string{"Supported STL/a.stl", "Supported STL/b.stl"}); f != "" {
		t.Errorf("RootFolder(Supported STL/) = %q", f)
	}
	if k := PatternKey("Files - Goblin Archer.zip"); k != "" {
		t.Errorf("PatternKey(Files - ...) = %q", k)
	}
	if n := NameFor([]Package{{ID: 1, FileName: "STL Dragon.zip"}, {ID: 2, FileName: "STL Knight.zip"}}); n != "STL Dragon" {
		t.Errorf("NameFor(STL ...) = %q, want the first file's name", n)
	}
	if r, ok := LearnRule([]Package{{ID: 1, FileName: "New Release Dragon.zip"}, {ID: 2, FileName: "New Release Knight.zip"}}); ok {
		t.Errorf("LearnRule learned %+v from a generic prefix", r)
	}
}

func TestDesignPass(t *testing.T) {
	tests := []struct {
		name   string
		pkgs   []Package
		groups []Group
		want   Plan
	}{
		{
			name: "variants of one creator's design form a group named by the design",
			pkgs: []Package{
				{ID: 1, FileName: "Kraken Queen - Supported.zip", Creator: "Abyss", PostedAt: at(0)},
				{ID: 2, FileName: "Kraken Queen 75mm.zip", Creator: "Abyss", PostedAt: at(9000)},
				{ID: 3, FileName: "Kraken Queen.zip", Creator: "Deep Ones", PostedAt: at(100)}, // another creator
			},
			want: Plan{NewGroups: []NewGroup{{Name: "Kraken Queen", Source: SourcePattern, Key: "design:kraken queen|abyss", PackageIDs: ids(1, 2)}}},
		},
		{
			name: "a late variant joins the automatic group holding its design",
			pkgs: []Package{
				{ID: 1, FileName: "Frost Giant.zip", Creator: "MM", GroupID: 30},
				{ID: 2, FileName: "Ice Wolves.zip", Creator: "MM", GroupID: 30},
				{ID: 3, FileName: "Frost Giant v2.zip", Creator: "MM"},
			},
			groups: []Group{{ID: 30, Source: SourceTime, Key: "t"}},
			want:   Plan{Joins: []Join{{GroupID: 30, PackageIDs: ids(3)}}},
		},
		{
			name: "manual groups take nothing in",
			pkgs: []Package{
				{ID: 1, FileName: "Frost Giant.zip", Creator: "MM", GroupID: 31},
				{ID: 2, FileName: "Frost Giant v2.zip", Creator: "MM"},
			},
			groups: []Group{{ID: 31, Source: SourceManual}},
		},
		{
			name: "names that are only a variant or generic words are no design",
			pkgs: []Package{
				{ID: 1, FileName: "Supported.zip", Creator: "MM"}, {ID: 2, FileName: "Unsupported.zip", Creator: "MM"},
				{ID: 3, FileName: "STL v1.zip", Creator: "MM"}, {ID: 4, FileName: "STL v2.zip", Creator: "MM"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkPlan(t, runPass(designPass, Input{Packages: tt.pkgs, Groups: tt.groups}), tt.want)
		})
	}
}

func TestTimePassReleases(t *testing.T) {
	w := 5 * time.Minute
	tests := []struct {
		name string
		pkgs []Package
		want Plan
	}{
		{
			name: "interleaved creators of one session are apart",
			pkgs: []Package{
				{ID: 1, FileName: "Floor.zip", Creator: "Dungeon Tiles", PostedAt: at(0)},
				{ID: 2, FileName: "Crates.zip", Creator: "Sci-Fi", PostedAt: at(3)},
				{ID: 3, FileName: "Walls.zip", Creator: "Dungeon Tiles", PostedAt: at(6)}, // 6 min after its creator's last
				{ID: 4, FileName: "Barrels.zip", Creator: "Sci-Fi", PostedAt: at(9)},
				{ID: 5, FileName: "Lone.zip", Creator: "Other", PostedAt: at(11)},
			},
			want: Plan{NewGroups: []NewGroup{
				{Name: "Floor", Source: SourceTime, Key: "2024-01-15T12:00:00Z|dungeon tiles", PackageIDs: ids(1, 3)},
				{Name: "Crates", Source: SourceTime, Key: "2024-01-15T12:03:00Z|sci fi", PackageIDs: ids(2, 4)},
			}},
		},
		{
			name: "one creator's burst of several months is one release per month",
			pkgs: []Package{
				{ID: 1, FileName: "DTL - 2023-01 - Hero.zip", Creator: "DTL", PostedAt: at(0)},
				{ID: 2, FileName: "DTL - 2023-01 - Villain.zip", Creator: "DTL", PostedAt: at(2)},
				{ID: 3, FileName: "DTL - 2023-02 - Orc.zip", Creator: "DTL", PostedAt: at(4)},
				{ID: 4, FileName: "DTL - 2023-02 - Troll.zip", Creator: "DTL", PostedAt: at(6)},
				{ID: 5, FileName: "DTL - 2023-03 - Ship.zip", Creator: "DTL", PostedAt: at(8)},
			},
			want: Plan{NewGroups: []NewGroup{
				{Name: "DTL - 2023-01", Source: SourceTime, Key: "2024-01-15T12:00:00Z|dtl|2023-01", PackageIDs: ids(1, 2)},
				{Name: "DTL - 2023-02", Source: SourceTime, Key: "2024-01-15T12:04:00Z|dtl|2023-02", PackageIDs: ids(3, 4)},
			}},
		},
		{
			name: "no common prefix: the first caption that names something, then the design",
			pkgs: []Package{
				{ID: 1, FileName: "Wyvern Rider - Supported.zip", Creator: "MM", Caption: "New release!", PostedAt: at(0)},
				{ID: 2, FileName: "Sand Worm.zip", Creator: "MM", Caption: "Cavern expansion. Enjoy!", PostedAt: at(2)},
				{ID: 3, FileName: "Oasis.zip", Creator: "XY", PostedAt: at(3)},
				{ID: 4, FileName: "Camel Riders - Supported.zip", Creator: "XY", PostedAt: at(4)},
			},
			want: Plan{NewGroups: []NewGroup{
				{Name: "Cavern expansion", Source: SourceTime, Key: "2024-01-15T12:00:00Z|mm", PackageIDs: ids(1, 2)},
				{Name: "Oasis", Source: SourceTime, Key: "2024-01-15T12:03:00Z|xy", PackageIDs: ids(3, 4)},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkPlan(t, runPass(timePass, Input{Packages: tt.pkgs, TimeWindow: w}), tt.want)
		})
	}
}
