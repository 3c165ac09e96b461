package web

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/grouping"
)

// variantBadge finds the variant labels a page shows.
var variantBadge = regexp.MustCompile(`<span class="badge variant"[^>]*>([^<]*)</span>`)

// TestVariantLabelsShown checks that the catalog's list and grid, the
// package page and the group page show a package's variant label (as
// cmd/hoard wires it: grouping.VariantLabel) and nothing for a plain name.
func TestVariantLabelsShown(t *testing.T) {
	e := newEnv(t, func(d *Deps) { d.VariantLabel = grouping.VariantLabel })
	ctx := context.Background()
	ch := &hoard.Channel{PlatformID: 778, Title: "Frost Channel", Kind: hoard.ChannelSource}
	if err := e.db.UpsertChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	pk := map[string]*hoard.Package{}
	for i, name := range []string{"Frost Giant - Supported 75mm.zip", "Frost Giant.zip", "Sand Worm v2.zip", "Sand Worm.zip"} {
		p := &hoard.Package{FileName: name, FileSize: int64(1000 + i), ArchiveType: hoard.ArchiveZIP,
			ContentHash: fmt.Sprintf("%064x", 100+i), Creator: "Frost Forge", SourceChannelID: ch.ID, SourceMessageID: int64(50 + i)}
		if err := e.db.CreatePackage(ctx, p); err != nil {
			t.Fatal(err)
		}
		pk[name] = p
	}
	g := &hoard.PackageGroup{Name: "Sand Worm", GroupingSource: hoard.GroupManual, SourceChannelID: ch.ID}
	if err := e.db.CreateGroup(ctx, g); err != nil {
		t.Fatal(err)
	}
	if err := e.db.SetPackageGroup(ctx, []int64{pk["Sand Worm v2.zip"].ID, pk["Sand Worm.zip"].ID}, g.ID); err != nil {
		t.Fatal(err)
	}
	user, _ := e.user(hoard.RoleUser)
	c := e.session(user)
	tests := []struct {
		name, path string
		want       []string // the labels shown, in page order
	}{
		{"catalog list", "/?q=giant&view=list", []string{"supported 75mm"}},
		{"catalog grid", "/?q=giant&view=grid", []string{"supported 75mm"}},
		{"package with a variant", fmt.Sprintf("/packages/%d", pk["Frost Giant - Supported 75mm.zip"].ID), []string{"supported 75mm"}},
		{"plain package", fmt.Sprintf("/packages/%d", pk["Frost Giant.zip"].ID), nil},
		{"group page", fmt.Sprintf("/groups/%d", g.ID), []string{"v2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := e.do(nil, "GET", tc.path, nil, c)
			if resp.StatusCode != 200 {
				t.Fatalf("%s: status %d", tc.path, resp.StatusCode)
			}
			var got []string
			for _, m := range variantBadge.FindAllStringSubmatch(body, -1) {
				got = append(got, m[1])
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s shows variants %q, want %q", tc.path, got, tc.want)
			}
		})
	}
}
