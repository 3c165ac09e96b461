package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	bt "github.com/hoard/hoard/web/browsertest"
)

// Viewports every page must fit: a phone (390 CSS pixels, as an iPhone
// 12–15) and a laptop.
var viewports = []struct {
	name          string
	width, height int64
	mobile        bool
}{{"phone", 390, 844, true}, {"laptop", 1280, 900, false}}

// pageRoutes reads the GET routes of README's route table that answer with
// a page of the application (not JSON under /api/, not static files, health
// checks, images, identity providers' redirects or the River UI mounted
// under /admin/river).
func pageRoutes(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?m)^\\| GET \\| `([^`]+)` \\|").FindAllStringSubmatch(string(readme), -1) {
		p := m[1]
		switch {
		case strings.HasPrefix(p, "/api/"), strings.HasPrefix(p, "/static/"), p == "/favicon.ico", p == "/healthz", p == "/readyz",
			strings.HasSuffix(p, "/preview"), strings.HasSuffix(p, "/download"), // images and files, not pages
			strings.HasPrefix(p, "/auth/"): // an identity provider's redirect back; the demo has none
			continue
		}
		out = append(out, p)
	}
	if len(out) < 10 {
		t.Fatalf("README's route table lists %d pages: %q", len(out), out)
	}
	return out
}

// overflowJS reports the page's width against the viewport's, and the
// elements reaching past the viewport's right edge (the widest first), to
// say what overflows.
const overflowJS = `(() => {
	const vw = document.documentElement.clientWidth;
	const wide = [...document.querySelectorAll("body *")]
		.map(e => [e, e.getBoundingClientRect().right])
		.filter(([e, r]) => r > vw + 0.5 && getComputedStyle(e).position !== "fixed" && !e.closest(".table-wrap"))
		.sort((a, b) => b[1] - a[1]).slice(0, 3)
		.map(([e, r]) => e.tagName.toLowerCase() + (e.className ? "." + String(e.className).split(" ").join(".") : "") + " to " + Math.round(r));
	return {scroll: document.documentElement.scrollWidth, viewport: vw, wide};
})()`

type overflow struct {
	Scroll   int      `json:"scroll"`
	Viewport int      `json:"viewport"`
	Wide     []string `json:"wide"`
}

// checkPagesFit opens every page at both viewports and fails for any whose
// document is wider than the viewport (a sideways scroll). pages maps each
// route of pageRoutes to the paths that stand for it; a route without one
// fails the test, so a new page cannot go unchecked.
func checkPagesFit(t *testing.T, b context.Context, base string, pages map[string][]string, signOut func()) {
	t.Helper()
	for _, route := range pageRoutes(t) {
		if len(pages[route]) == 0 {
			t.Errorf("no page stands for the route %s: add one to the walk", route)
		}
	}
	public := []string{"/login", "/register"}
	for _, vp := range viewports {
		var emulate chromedp.Action[chromedp.Void] = chromedp.EmulateViewport(vp.width, vp.height)
		if vp.mobile {
			emulate = chromedp.EmulateViewport(vp.width, vp.height, chromedp.EmulateMobile)
		}
		bt.Do(t, b, emulate)
		if vp.mobile {
			checkFirstCardAboveFold(t, b, base, vp.height)
		}
		for _, route := range slices.Sorted(func(yield func(string) bool) {
			for r := range pages {
				if !yield(r) {
					return
				}
			}
		}) {
			if slices.Contains(public, route) {
				continue // visited signed out below
			}
			for _, path := range pages[route] {
				checkFits(t, b, base+path, vp.name)
			}
		}
	}
	signOut()
	for _, vp := range viewports {
		bt.Do(t, b, chromedp.EmulateViewport(vp.width, vp.height))
		for _, path := range public {
			checkFits(t, b, base+path, vp.name)
		}
	}
	bt.Do(t, b, chromedp.EmulateViewport(1280, 900))
}

// checkFirstCardAboveFold fails unless the catalog's first package card
// starts within the phone's first screen (height CSS pixels): navigation
// and the selection bar must not push it below the fold.
func checkFirstCardAboveFold(t *testing.T, b context.Context, base string, height int64) {
	t.Helper()
	bt.Follow(t, b, chromedp.Navigate(base+"/"))
	top := bt.Run(t, b, chromedp.Evaluate[float64](`document.querySelector("ul.grid > li").getBoundingClientRect().top`))
	if top <= 0 || top > float64(height)-100 {
		t.Errorf("phone: the first package card starts at %.0f px of %d", top, height)
	}
}

// checkListViewKeepsWords fails when the catalog's list view, at a
// laptop's width, breaks a tag or a size over two lines.
func checkListViewKeepsWords(t *testing.T, b context.Context, base string) {
	t.Helper()
	bt.Do(t, b, chromedp.EmulateViewport(1280, 900))
	bt.Follow(t, b, chromedp.Navigate(base+"/?view=list"))
	broken := bt.Run(t, b, chromedp.Evaluate[[]string](`[...document.querySelectorAll("table.list .badge, table.list td.size")]
		.filter(el => { const r = document.createRange(); r.selectNodeContents(el);
			return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size > 1; })
		.map(el => el.textContent)`))
	if len(broken) > 0 {
		t.Errorf("list view: %q broken over lines", broken)
	}
}

// checkFits opens one page and fails when it is wider than the viewport.
func checkFits(t *testing.T, b context.Context, url, viewport string) {
	t.Helper()
	bt.Follow(t, b, chromedp.Navigate(url))
	checkFitsHere(t, b, url, viewport)
}

// checkFitsHere fails when the page shown is wider than the viewport.
func checkFitsHere(t *testing.T, b context.Context, where, viewport string) {
	t.Helper()
	bt.Do(t, b, chromedp.WaitReady(chromedp.CSS(`main`)))
	got := bt.Run(t, b, chromedp.Evaluate[overflow](overflowJS))
	if got.Scroll > got.Viewport {
		t.Errorf("%s on a %s: the page is %d px wide in a %d px viewport (overflowing: %q)", where, viewport, got.Scroll, got.Viewport, got.Wide)
	}
}

// checkRenderedThumbnail opens a package of a 3D model that has no picture
// of its own and fails unless its preview is the renderer's: a loaded
// image, not the placeholder, 512 pixels square (archive pictures are
// re-encoded to at most 800 pixels, keeping their proportions).
func checkRenderedThumbnail(t *testing.T, b context.Context, base string, packageID int64) {
	t.Helper()
	bt.Follow(t, b, chromedp.Navigate(fmt.Sprintf("%s/packages/%d", base, packageID)))
	bt.Do(t, b, chromedp.WaitVisible(chromedp.CSS(`[data-package-preview] img`)),
		chromedp.Poll[chromedp.Void](`document.querySelector("[data-package-preview] img").complete`, chromedp.WithPollingTimeout(10*time.Second)))
	size := bt.Run(t, b, chromedp.Evaluate[[]int](`(() => { const i = document.querySelector("[data-package-preview] img");
		return [i.naturalWidth, i.naturalHeight, document.querySelectorAll("[data-package-preview] .noimg").length]; })()`))
	if !slices.Equal(size, []int{512, 512, 0}) {
		t.Errorf("package %d's preview: %d×%d, %d placeholders; want the 512×512 render and none", packageID, size[0], size[1], size[2])
	}
}

// checkFailedFormKeepsInput posts forms that fail validation, as a person
// would, at a phone's width, and fails unless the page comes back (422)
// with the message beside the field and what was typed still there.
func checkFailedFormKeepsInput(t *testing.T, b context.Context, base string) {
	t.Helper()
	defer bt.Do(t, b, chromedp.EmulateViewport(1280, 900))
	type form struct {
		name, page, input, typed, submit, want string
		scope                                  string // the element holding the field and its message
		// laptop posts it at a laptop's width: on a phone the selection
		// bar's fields show only once a package is selected.
		laptop bool
	}
	for _, f := range []form{
		{"Apply with nothing selected", "/", `#bulk input[name=tags]`, "keep, these", `#bulk button[type=submit]:not([formaction])`,
			"Select at least one package.", `#bulk`, true},
		{"an invalid channel link", "/admin/messenger", `form[data-join-form] input[name=ref]`, "https://example.com/nope",
			`form[data-join-form] button[type=submit]`, "", `form[data-join-form]`, false},
	} {
		width, height, opts := int64(390), int64(844), []chromedp.EmulateViewportOption{chromedp.EmulateMobile}
		if f.laptop {
			width, height, opts = 1280, 900, nil
		}
		bt.Do(t, b, chromedp.EmulateViewport(width, height, opts...))
		bt.Follow(t, b, chromedp.Navigate(base+f.page))
		bt.Do(t, b, chromedp.WaitVisible(chromedp.CSS(f.input)), chromedp.SendKeys(chromedp.CSS(f.input), f.typed))
		ctx, cancel := context.WithTimeout(b, 30*time.Second)
		resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(f.submit)))
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		bt.Do(t, b, chromedp.WaitReady(chromedp.CSS(f.scope+` .field-error`)))
		type shown struct {
			Status  int
			Value   string
			Message string
		}
		got := shown{Status: int(resp.Status), Value: bt.Run(t, b, chromedp.Evaluate[string](`document.querySelector(`+jsString(f.input)+`).value`)),
			Message: bt.Text(t, b, f.scope+` .field-error`)}
		want := shown{Status: 422, Value: f.typed, Message: f.want}
		if f.want == "" {
			want.Message = got.Message // the parser's words; it must say something
			if got.Message == "" {
				t.Errorf("%s: no message beside the field", f.name)
			}
		}
		if got != want {
			t.Errorf("%s: got %+v, want %+v", f.name, got, want)
		}
		checkFitsHere(t, b, f.name, "after the failed post")
	}
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string { return fmt.Sprintf("%q", s) }
