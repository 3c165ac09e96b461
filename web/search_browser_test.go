package web

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/hoard/hoard"
	bt "github.com/hoard/hoard/web/browsertest"
)

// TestBrowserCatalogSearch: a search finds a package by a path inside its
// archive and shows the matched files with the text marked (a hostile path
// stays text); "drag forge" (every word a prefix) and "ag" (inside a word)
// find Dragon Forge; the count and the previous and next page links show.
func TestBrowserCatalogSearch(t *testing.T) {
	e := newEnv(t)
	ctx := bt.New(t)
	errs := bt.CollectErrors(t, ctx)
	defer errs.Check(t, "the search pages")
	bg := context.Background()
	e.seedCatalog()
	forge := &hoard.Package{FileName: "Dragon Forge.zip", FileSize: 5000, ArchiveType: hoard.ArchiveZIP,
		ContentHash: fmt.Sprintf("%064x", 99), Creator: "Dragon Forge", Tags: []string{"Fantasy"}}
	if err := e.db.CreatePackage(bg, forge); err != nil {
		t.Fatal(err)
	}
	if err := e.db.ReplacePackageFiles(bg, forge.ID, []hoard.PackageFile{{Path: "Hoard Set/chest.stl"},
		{Path: "Hoard Set/render.png"}, {Path: `<img src=x onerror="document.title='owned'">/chest.stl`}}); err != nil {
		t.Fatal(err)
	}
	u, password := e.user(hoard.RoleUser)
	base := e.ts.URL
	signIn(t, ctx, base, u.Email, password)

	search := func(text string) {
		t.Helper()
		bt.Do(t, ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`input[name=q]`)),
			chromedp.SendKeys(chromedp.CSS(`input[name=q]`), text))
		bt.Follow(t, ctx, chromedp.Submit(chromedp.CSS(`input[name=q]`)))
		bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`[data-result-count]`)))
	}

	search("chest.stl")
	type shown struct {
		Grid, Files, Marks, Count, Title string
		Images                           int
	}
	var got shown
	got.Grid = bt.Text(t, ctx, "ul.grid")
	got.Files = bt.Text(t, ctx, "ul.grid [data-files-matched]")
	got.Count = bt.Text(t, ctx, "[data-result-count]")
	got.Marks = bt.Run(t, ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-files-matched] mark')].map(m => m.textContent).join('|')`))
	got.Images = bt.Run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-files-matched] img').length`))
	got.Title = bt.Run(t, ctx, chromedp.Title())
	want := shown{Grid: got.Grid, Count: "1 package", Marks: "chest.stl|chest.stl", Title: got.Title,
		Files: `2 files match: Hoard Set/chest.stl, <img src=x onerror="document.title='owned'">/chest.stl`}
	if got != want || !strings.Contains(got.Grid, "Dragon Forge.zip") || got.Title == "owned" {
		t.Fatalf("chest.stl:\ngot  %+v\nwant %+v (the grid holding Dragon Forge.zip)", got, want)
	}

	for _, text := range []string{"drag forge", "ag", "render.png"} {
		search(text)
		if grid := bt.Text(t, ctx, "ul.grid"); !strings.Contains(grid, "Dragon Forge.zip") {
			t.Fatalf("%q: %q", text, grid)
		}
	}

	// Paging: one result a page, forward and back.
	bt.Do(t, ctx, chromedp.Navigate(base+"/?q=dragon&limit=1"), chromedp.WaitVisible(chromedp.CSS(`a[rel=next]`)))
	first := bt.Text(t, ctx, "ul.grid")
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`a[rel=next]`)))
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`a[rel=prev]`)))
	if second := bt.Text(t, ctx, "ul.grid"); second == first || !strings.Contains(bt.Text(t, ctx, "[data-result-count]"), "page 2") {
		t.Fatalf("second page %q after %q", second, first)
	}
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`a[rel=prev]`)))
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`a[rel=next]`)))
	if again := bt.Text(t, ctx, "ul.grid"); again != first {
		t.Fatalf("back to the first page: %q, want %q", again, first)
	}
}
