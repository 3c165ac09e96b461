package web

import (
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// TestCardCacheKeepsCardsByContent: a kept card is shown again only for a
// package that shows the same, and every value is escaped as the page's
// own markup is.
func TestCardCacheKeepsCardsByContent(t *testing.T) {
	tmpl := pagesWith(nil)["catalog"]
	c := newCardCache(func(name string) string {
		if strings.Contains(name, "supported") {
			return "supported"
		}
		return ""
	})
	hit := &store.SearchHit{Package: hoard.Package{ID: 7, FileName: `<b>Knight</b> supported.zip`, FileSize: 3 << 20,
		ArchiveType: hoard.ArchiveZIP, Creator: `Ann "&" Co`, Tags: []string{"Busts"}, CreatedAt: time.Date(2024, 5, 1, 10, 30, 0, 0, time.UTC)}}
	render := func(list bool, channel string, preview bool) string {
		t.Helper()
		k, err := c.card(tmpl, hit, list, channel, preview)
		if err != nil {
			t.Fatal(err)
		}
		return string(k.head) + "|" + string(k.tail)
	}
	for _, list := range []bool{false, true} {
		got := render(list, "Chan <1>", false)
		for _, want := range []string{`&lt;b&gt;Knight&lt;/b&gt; supported.zip`, `Ann &#34;&amp;&#34; Co`, `href="/creators/Ann%20%22&amp;%22%20Co"`,
			`href="/tags/Busts"`, `title="variant">supported</span>`, `3.0 MiB`} {
			if !strings.Contains(got, want) {
				t.Errorf("list=%v: card lacks %q:\n%s", list, want, got)
			}
		}
		if strings.Contains(got, "<b>") {
			t.Errorf("list=%v: the file name is not escaped:\n%s", list, got)
		}
		if list && !strings.Contains(got, "Chan &lt;1&gt;") || list && !strings.Contains(got, "2024-05-01 10:30") {
			t.Errorf("list: channel or date missing:\n%s", got)
		}
	}
	// What the card shows changed: another card.
	hit.Package.Tags = []string{"Terrain"}
	if got := render(false, "", false); !strings.Contains(got, `href="/tags/Terrain"`) || strings.Contains(got, "Busts") {
		t.Errorf("after the tags changed:\n%s", got)
	}
	hit.Group = &store.SearchGroup{ID: 3, Name: "Knights", MemberCount: 2}
	if got := render(false, "", false); !strings.Contains(got, `<div class="noimg">group</div>`) {
		t.Errorf("a group without a picture:\n%s", got)
	}
	if got := render(false, "", true); !strings.Contains(got, `src="/groups/3/preview"`) {
		t.Errorf("a group with a picture:\n%s", got)
	}
	if got := render(true, "Other", false); !strings.Contains(got, "Other") {
		t.Errorf("the list after the channel's title changed:\n%s", got)
	}
}
