package web

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hoard/hoard"
)

// TestPagesShowPlatformTextNeutralised: a name, creator, caption, entry
// path, channel title and group name with direction overrides and
// invisible controls are shown with those neutralised (hoard.DisplayText)
// on the pages that show them; the stored text keeps them.
func TestPagesShowPlatformTextNeutralised(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const (
		rlo      = "\u202E"
		name     = "invoice" + rlo + "lts.exe"
		creator  = "Ma\u2066ker\u2069"
		caption  = "line one\u200B\nline two"
		path     = "dir/" + rlo + "gpj.stl"
		title    = "Chan\u202Dnel"
		group    = "Gro\u202Aup"
		escaped1 = "invoice\uFFFDlts.exe"
	)
	ch := &hoard.Channel{PlatformID: 4242, Title: title, Kind: hoard.ChannelSource}
	if err := e.db.UpsertChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	p := &hoard.Package{FileName: name, FileSize: 10, ArchiveType: hoard.ArchiveZIP, ContentHash: fmt.Sprintf("%064x", 4242),
		Creator: creator, SourceChannelID: ch.ID, SourceCaption: caption, SourceMessageID: 1}
	if err := e.db.CreatePackage(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := e.db.ReplacePackageFiles(ctx, p.ID, []hoard.PackageFile{{Path: path, Size: 5}}); err != nil {
		t.Fatal(err)
	}
	other := &hoard.Package{FileName: "other.zip", FileSize: 10, ArchiveType: hoard.ArchiveZIP, ContentHash: fmt.Sprintf("%064x", 4243),
		SourceChannelID: ch.ID, SourceMessageID: 2}
	if err := e.db.CreatePackage(ctx, other); err != nil {
		t.Fatal(err)
	}
	g, err := e.db.CreateManualGroup(ctx, group, []int64{p.ID, other.ID})
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	for _, tt := range []struct {
		page string
		want []string
	}{
		{fmt.Sprintf("/packages/%d", p.ID), []string{escaped1, "Ma\uFFFDker\uFFFD", "line one\uFFFD\nline two", "dir/\uFFFDgpj.stl", "Gro\uFFFDup"}},
		{"/?view=list", []string{escaped1, "Ma\uFFFDker\uFFFD", "Chan\uFFFDnel"}},
		{fmt.Sprintf("/groups/%d", g.ID), []string{"Gro\uFFFDup", escaped1, "Ma\uFFFDker\uFFFD"}},
		{fmt.Sprintf("/admin/messenger/channels/%d", ch.ID), []string{"Chan\uFFFDnel"}},
	} {
		t.Run(tt.page, func(t *testing.T) {
			resp, body := e.do(nil, "GET", tt.page, nil, c)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			var missing []string
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					missing = append(missing, w)
				}
			}
			hidden := strings.ContainsAny(body, "\u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069\u200B")
			if len(missing) > 0 || hidden {
				t.Errorf("missing %q; direction or invisible controls left: %v", missing, hidden)
			}
		})
	}
	stored, err := e.db.FindPackageByID(ctx, p.ID)
	if err != nil || stored.FileName != name || stored.Creator != creator {
		t.Errorf("stored package changed: %+v, %v", stored, err)
	}
}
