package web

import (
	"html/template"
	"testing"

	"github.com/hoard/hoard/store"
)

func TestHighlightHTML(t *testing.T) {
	tests := []struct {
		name, text, query string
		want              template.HTML
	}{
		{"a match", "Hoard Set/chest.stl", "chest", "Hoard Set/<mark>chest</mark>.stl"},
		{"any case, every occurrence", "Chest/CHEST_lid.stl", "chest", "<mark>Chest</mark>/<mark>CHEST</mark>_lid.stl"},
		{"the query trimmed", "a/chest.stl", "  chest.stl ", "a/<mark>chest.stl</mark>"},
		{"no match", "goblin.stl", "chest", "goblin.stl"},
		{"no query", "<b>x</b>", "", "&lt;b&gt;x&lt;/b&gt;"},
		{"a hostile path stays text", `<img src=x onerror="alert(1)">/chest.stl`, "chest",
			`&lt;img src=x onerror=&#34;alert(1)&#34;&gt;/<mark>chest</mark>.stl`},
		{"a hostile query stays text", "a<b>c.stl", "<b>", "a<mark>&lt;b&gt;</mark>c.stl"},
		{"a query longer than the path", "a.stl", "a.stl.zip", "a.stl"},
		{"letters beyond ASCII", "Ünïcode/STRASSE.stl", "ünï", "<mark>Ünï</mark>code/STRASSE.stl"},
		{"direction overrides are neutralised first", "evil\u202Egnp.stl", "gnp", "evil\uFFFD<mark>gnp</mark>.stl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := highlightHTML(tt.text, tt.query); got != tt.want {
				t.Fatalf("highlightHTML(%q, %q) = %q, want %q", tt.text, tt.query, got, tt.want)
			}
		})
	}
}

func TestCountAndFilesText(t *testing.T) {
	tests := []struct {
		res    store.SearchResult
		groups bool
		want   string
	}{
		{store.SearchResult{Count: 1, CountExact: true}, false, "1 package"},
		{store.SearchResult{Count: 3, CountExact: true}, false, "3 packages"},
		{store.SearchResult{Count: 1240, CountExact: false}, false, "about 1,240 packages"},
		{store.SearchResult{Count: 1234567, CountExact: false}, true, "about 1,234,567 packages"},
		{store.SearchResult{Count: 2, CountExact: true}, true, "2 groups"},
		{store.SearchResult{Count: 1, CountExact: true}, true, "1 group"},
		{store.SearchResult{Count: 0, CountExact: true}, false, "0 packages"},
	}
	for _, tt := range tests {
		if got := countText(&tt.res, tt.groups); got != tt.want {
			t.Errorf("countText(%+v, %v) = %q, want %q", tt.res, tt.groups, got, tt.want)
		}
	}
	for n, want := range map[int]string{1: "1 file matches", 3: "3 files match", store.MaxFilesCounted: "1,000+ files match"} {
		if got := filesMatchedText(n); got != want {
			t.Errorf("filesMatchedText(%d) = %q, want %q", n, got, want)
		}
	}
}
