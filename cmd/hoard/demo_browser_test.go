package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/hoard/hoard/demo"
	"github.com/hoard/hoard/store/storetest"
	bt "github.com/hoard/hoard/web/browsertest"
)

// TestDemoInBrowser signs in to `hoard demo` over the ingestion world and
// visits every screen in headless chromium, checking a key element of each
// and that no page reports a JavaScript exception or console error; then it
// triggers a cycle from the worker panel.
func TestDemoInBrowser(t *testing.T) {
	t.Parallel()
	bt.ChromiumPath(t) // skip before the slow set-up when there is no browser
	const maxAttempts = 2
	w := writeIngestWorld(t, t.TempDir(), maxAttempts)
	dir := dataDir(t)
	vars := onceVars(storetest.URL(t), dir, maxAttempts)
	if sum := runOnce(t, vars, w.Seed); sum.RunStatus != "COMPLETED" {
		t.Fatalf("demo --once: %+v", sum)
	}

	// The demo over the same data directory and database.
	addr := freeAddr(t)
	// A bound for a hung demo, not a pace: the walk through every page takes
	// about a minute on an idle machine and several on a loaded one.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd, stdout, stderr := hoardCmd(ctx, vars, "demo", "--seed", w.Seed, "--addr", addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// At the end, or on failure: SIGINT, and the demo stops cleanly.
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("demo exited with %v after SIGINT", err)
			}
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("demo did not stop within 60 s of SIGINT")
		}
		if t.Failed() {
			t.Logf("demo stdout:\n%s\nstderr:\n%s", stdout, tail(stderr.String(), 6000))
		}
	}()
	base := "http://" + addr
	waitFor(t, base+"/readyz", 60*time.Second, stderr)
	password, err := os.ReadFile(filepath.Join(dir, "demo_admin_password"))
	if err != nil {
		t.Fatal(err)
	}

	b := bt.New(t)
	errs := bt.CollectErrors(t, b)
	// visit opens a page, waits for sel and returns its text.
	visit := func(path, sel string) string {
		t.Helper()
		bt.Do(t, b, chromedp.Navigate(base+path), chromedp.WaitVisible(chromedp.CSS(sel)))
		return bt.Text(t, b, sel)
	}
	// wants fails the test unless got holds every one of want.
	wants := func(what, got string, want ...string) {
		t.Helper()
		for _, s := range want {
			if !strings.Contains(got, s) {
				t.Errorf("%s: no %q in %q", what, s, got)
			}
		}
	}
	// checkPage fails the test when an image of the page did not load
	// (lazy ones far below the fold are not asked for) or the page
	// reported errors since the last check.
	checkPage := func(where string, expected ...func(string) bool) {
		t.Helper()
		const images = `[...document.images].filter(i => i.loading !== "lazy" || i.getBoundingClientRect().top < innerHeight)`
		bt.Do(t, b, chromedp.Poll[chromedp.Void](images+`.every(i => i.complete)`, chromedp.WithPollingTimeout(10*time.Second)))
		if broken := bt.Run(t, b, chromedp.Evaluate[[]string](images+`.filter(i => i.naturalWidth === 0).map(i => i.getAttribute("src"))`)); len(broken) > 0 {
			t.Errorf("%s: images that did not load: %q", where, broken)
		}
		errs.Check(t, where, expected...)
	}

	bt.Do(t, b, chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=email]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=email]`), demo.AdminEmail),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), strings.TrimSpace(string(password))))
	bt.Follow(t, b, chromedp.Submit(chromedp.CSS(`input[name=password]`)))
	bt.Do(t, b, chromedp.WaitVisible(chromedp.CSS(`ul.grid`)))
	checkPage("sign in")

	// The catalog: both views, every tab.
	wants("catalog, grid", visit("/", "ul.grid"), "Mammoth Factory - 2024-01.zip", "Castle Walls.zip", "Big Pack.zip")
	checkPage("catalog, grid")
	wants("catalog, list", visit("/?view=list", "table.list"), "Mammoth Factory - 2024-01.zip", "Castle Walls.zip", "Big Pack.zip")
	checkPage("catalog, list")
	// Every group of the world on the Groups tab; on the Ungrouped tab
	// every package in no group (the forum's topics, a minute apart, are
	// two creators: no group) and no member of a group.
	var groupNames, members []string
	for _, g := range w.Groups {
		parts := strings.SplitN(g, "|", 3)
		groupNames = append(groupNames, parts[1])
		members = append(members, strings.Split(parts[2], ", ")...)
	}
	wants("groups tab", visit("/?tab=groups", "ul.grid"), groupNames...)
	checkPage("groups tab")
	ungrouped := visit("/?tab=ungrouped", "ul.grid")
	wants("ungrouped tab", ungrouped, w.Ungrouped...)
	for _, m := range members {
		if strings.Contains(ungrouped, m) {
			t.Errorf("ungrouped tab lists %q of a group: %q", m, ungrouped)
		}
	}
	checkPage("ungrouped tab")
	wants("skipped tab", visit("/?tab=skipped", "table.list"), "Cursed.zip", "DOWNLOAD_FAILED", "Broken Set.rar", "INCOMPLETE_SET")
	checkPage("skipped tab")

	// A search by name.
	bt.Do(t, b, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`input[name=q]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=q]`), "Mammoth"))
	bt.Follow(t, b, chromedp.Submit(chromedp.CSS(`input[name=q]`)))
	if loc := bt.Run(t, b, chromedp.Location()); !strings.Contains(loc, "q=Mammoth") {
		t.Errorf("search went to %s", loc)
	}
	found := bt.Text(t, b, "ul.grid")
	wants("search for Mammoth", found, "Mammoth Factory - 2024-01.zip")
	if strings.Contains(found, "Dragon Wings") || strings.Contains(found, "Painting Guide") {
		t.Errorf("search for Mammoth lists other creators' packages: %q", found)
	}
	checkPage("search")

	// A package opened from the catalog: preview and file list.
	bt.Do(t, b, chromedp.Navigate(base+"/?tab=ungrouped"), chromedp.WaitVisible(chromedp.CSS(`ul.grid`)))
	href := bt.Run(t, b, chromedp.Evaluate[string](`[...document.querySelectorAll("ul.grid li a")]
		.find(a => a.textContent.includes("Mammoth Factory - 2024-01.zip"))?.getAttribute("href") ?? ""`))
	if href == "" {
		t.Fatal("no tile of Mammoth Factory - 2024-01.zip on the ungrouped tab")
	}
	bt.Follow(t, b, chromedp.Click(chromedp.CSS(`ul.grid li a[href="`+href+`"]`)))
	if got := bt.Text(t, b, "article.package h1"); got != "Mammoth Factory - 2024-01.zip" {
		t.Errorf("package page title %q", got)
	}
	wants("package files", bt.Text(t, b, "table.list"), "Mammoth/body.stl", "Mammoth/tusks.stl", "cover.jpg")
	bt.Do(t, b, chromedp.WaitVisible(chromedp.CSS(`[data-package-preview] img`)))
	checkPage("package page")
	// Its Download button gives back the very bytes the catalog indexed:
	// the browser fetches it (through the web process's bot session) and
	// hashes it.
	const downloadJS = `(async () => {
		const a = document.querySelector("a[data-download]");
		const r = await fetch(a.href);
		const sum = await crypto.subtle.digest("SHA-256", await r.arrayBuffer());
		return [String(r.status), r.headers.get("Content-Disposition") || "",
			[...new Uint8Array(sum)].map(b => b.toString(16).padStart(2, "0")).join(""),
			document.querySelector("code.hash").textContent.trim()];
	})()`
	got := bt.Run(t, b, chromedp.Evaluate[[]string](downloadJS, chromedp.EvalAwaitPromise))
	if len(got) != 4 || got[0] != "200" || !strings.Contains(got[1], "Mammoth Factory - 2024-01.zip") || got[2] != got[3] {
		t.Errorf("download from the package page = %q, want 200, its name and a SHA-256 equal to the page's", got)
	}

	// A group opened from the Groups tab.
	bt.Do(t, b, chromedp.Navigate(base+"/?tab=groups"), chromedp.WaitVisible(chromedp.CSS(`ul.grid`)))
	bt.Follow(t, b, chromedp.Click(chromedp.CSS(`ul.grid li a[href^="/groups/"]`)))
	if got := bt.Text(t, b, "article.package"); !strings.Contains(got, "packages · ") || strings.Contains(got, "AUTO_") {
		t.Errorf("group page: %q", got)
	}
	if n := bt.Run(t, b, chromedp.Evaluate[int](`document.querySelectorAll("table.list tbody tr a[href^='/packages/']").length`)); n < 2 {
		t.Errorf("group page lists %d members", n)
	}
	checkPage("group page")

	// Messaging: the worker panel and the channels. The demo ran a cycle
	// as it started (over what --once ingested: nothing new).
	bt.Do(t, b, chromedp.Navigate(base+"/admin/messenger"), chromedp.WaitVisible(chromedp.CSS(`[data-worker-state]`)),
		chromedp.Poll[chromedp.Void](`document.querySelector("[data-worker-state]").textContent.startsWith("Idle. Last cycle completed")`,
			chromedp.WithPollingTimeout(60*time.Second)))
	if next := bt.Text(t, b, "[data-worker-next]"); !strings.HasPrefix(next, "in ") && next != "due now" {
		t.Errorf("next scheduled cycle %q", next)
	}
	wants("channels", bt.Text(t, b, "main"), "Mammoth Factory [Completed] 🦣", "Dragon Forge (Paid)", "STL Emporium", "Paint Shop",
		"Lost Vault", "access lost", "Hoard Archive")
	checkPage("messaging")

	// The forum's page with its topics.
	bt.Follow(t, b, chromedp.Click(chromedp.Search(`//a[text()="STL Emporium"]`)))
	wants("forum page", bt.Text(t, b, "main"), "STL Emporium", "forum", "Topics", "Dragons", "Terrain")
	checkPage("forum page")

	// Notifications: the page and the bell.
	notes := visit("/notifications", "ul.notes")
	wants("notifications", notes, "DOWNLOAD_FAILED", "Download failed: Cursed.zip", "CHANNEL_ACCESS_LOST", "Channel access lost: Lost Vault")
	checkPage("notifications")
	bt.Do(t, b, chromedp.Navigate(base+"/crowdfunds"), chromedp.WaitVisible(chromedp.CSS(`[data-bell]`)),
		chromedp.Click(chromedp.CSS(`[data-bell]`)),
		chromedp.WaitVisible(chromedp.CSS(`.bell-list li.note`)))
	wants("the bell's list", bt.Text(t, b, ".bell-list ul.notes"), "Download failed: Cursed.zip", "Channel access lost: Lost Vault")
	checkPage("bell")

	// The other screens.
	for _, s := range []struct{ path, sel, want string }{
		{"/admin/invites", `form[action="/admin/invites"]`, "How many"},
		{"/crowdfunds", `form[action="/crowdfunds"][method="post"]`, ""},
		{"/uploads", `form[data-upload]`, ""},
		{"/settings", `form[action="/settings/messenger/link-code"]`, "Get a link code"},
		{"/status", `main`, ""},
	} {
		wants(s.path, visit(s.path, s.sel), s.want)
		checkPage(s.path)
	}
	bt.Do(t, b, chromedp.Navigate(base+"/admin/river/"), chromedp.WaitReady(chromedp.CSS(`body`)),
		chromedp.Poll[chromedp.Void](`document.title.toLowerCase().includes("river")`, chromedp.WithPollingTimeout(10*time.Second)))
	checkPage("River UI", bt.RiverUIEvalProbe)

	// An action: Trigger now on the worker panel, confirmed in place; the
	// panel then follows the cycle the worker runs.
	// Leaving River UI's single-page app: Poll evaluates in the frame's
	// current script context and does not survive a navigation still under
	// way ("Cannot find context with specified id", once in a clean-clone
	// CI run), so the new page's element is waited for first.
	bt.Do(t, b, chromedp.Navigate(base+"/admin/messenger"), chromedp.WaitVisible(chromedp.CSS(`[data-worker-state]`)),
		chromedp.Poll[chromedp.Void](`document.querySelector("[data-worker-state]").textContent.startsWith("Idle.")`,
			chromedp.WithPollingTimeout(60*time.Second)))
	before := bt.Text(t, b, "[data-worker-state]")
	bt.Do(t, b, chromedp.Click(chromedp.CSS(`form[action^="/api/ingestion/trigger"] button`)),
		chromedp.Poll[chromedp.Void](`document.querySelector("form[action^='/api/ingestion/trigger'] [data-action-result]").textContent.includes("cycle queued")`,
			chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector("[data-worker-state]").textContent !== %q`, before),
			chromedp.WithPollingTimeout(20*time.Second)))
	checkPage("Trigger now")

	// A 3D model without a picture shows its rendered model; forms that
	// fail keep their input; every page fits a phone and a laptop.
	catalog := bt.Run(t, b, chromedp.Evaluate[[]struct {
		ID       int64  `json:"id"`
		FileName string `json:"file_name"`
	}](`fetch("/api/packages?limit=200&sort=newest").then(r => r.json()).then(b => b.items)`, chromedp.EvalAwaitPromise))
	ids := map[string]int64{}
	for _, p := range catalog {
		ids[p.FileName] = p.ID
	}
	if ids["Dragon_Bust_v2_supported.stl"] == 0 || ids["Castle Walls.zip"] == 0 {
		t.Fatalf("the catalog lacks the model packages: %v", ids)
	}
	checkRenderedThumbnail(t, b, base, ids["Dragon_Bust_v2_supported.stl"]) // a document
	checkRenderedThumbnail(t, b, base, ids["Castle Walls.zip"])             // an archive of models without pictures
	checkFailedFormKeepsInput(t, b, base)
	checkPage("failed forms", func(msg string) bool { return strings.Contains(msg, "status of 422 (Unprocessable Entity)") })
	checkListViewKeepsWords(t, b, base)
	checkPagesFit(t, b, base, demoPages(t, b, base, ids), func() {
		bt.Follow(t, b, chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)))
	})
	checkPage("every page")
}

// demoPages are the paths that stand for each page route in the demo over
// the ingestion world; it creates what some need (a crowdfund record, an
// upload) through their forms.
func demoPages(t *testing.T, b context.Context, base string, ids map[string]int64) map[string][]string {
	t.Helper()
	href := func(page, sel string) string {
		t.Helper()
		bt.Follow(t, b, chromedp.Navigate(base+page))
		return bt.Run(t, b, chromedp.Evaluate[string](`document.querySelector(`+jsString(sel)+`)?.getAttribute("href") ?? ""`))
	}
	group := href("/?tab=groups", `ul.grid a[href^="/groups/"]`)
	channel := href("/admin/messenger", `a[href^="/admin/messenger/channels/"]`)
	if group == "" || channel == "" {
		t.Fatalf("no group (%q) or channel (%q) to visit", group, channel)
	}
	bt.Follow(t, b, chromedp.Navigate(base+"/crowdfunds"))
	bt.Do(t, b, chromedp.SendKeys(chromedp.CSS(`form[action="/crowdfunds"][method="post"] input[name=name]`), "Dragon Forge — the whole collection, every tier, with a name long enough to wrap"))
	bt.Follow(t, b, chromedp.Submit(chromedp.CSS(`form[action="/crowdfunds"][method="post"] input[name=name]`)))
	crowdfund, _, _ := strings.Cut(strings.TrimPrefix(bt.Run(t, b, chromedp.Location()), base), "?")
	file := filepath.Join(t.TempDir(), "A file with a rather long name to upload from the browser test.stl")
	if err := os.WriteFile(file, []byte("solid x\nendsolid x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bt.Follow(t, b, chromedp.Navigate(base+"/uploads"))
	bt.Do(t, b, chromedp.SetUploadFiles(chromedp.CSS(`form[data-upload] input[type=file]`), []string{file}),
		chromedp.Click(chromedp.CSS(`form[data-upload] button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-upload-state]`)))
	upload := strings.TrimPrefix(bt.Run(t, b, chromedp.Location()), base)
	return map[string][]string{
		"/":                {"/", "/?view=list", "/?tab=groups", "/?tab=ungrouped&view=list", "/?tab=skipped", "/?q=mammoth&type=ZIP"},
		"/status":          {"/status"},
		"/login":           {"/login"},
		"/register":        {"/register?code=nonexistent"},
		"/settings":        {"/settings"},
		"/creators/{name}": {"/creators/Dragon%20Forge", "/creators/Mammoth%20Factory?view=list"},
		"/tags/{tag}":      {"/tags/STL"},
		"/packages/{id}": {fmt.Sprintf("/packages/%d", ids["Dragon_Bust_v2_supported.stl"]), fmt.Sprintf("/packages/%d", ids["Mammoth Factory - 2024-01.zip"]),
			fmt.Sprintf("/packages/%d", ids["Big Pack.zip"])},
		"/groups/{id}":                          {group},
		"/crowdfunds":                           {"/crowdfunds"},
		"/crowdfunds/{id}":                      {crowdfund, crowdfund + "?q=dragon"},
		"/uploads":                              {"/uploads"},
		"/uploads/{id}":                         {upload},
		"/notifications":                        {"/notifications"},
		"/admin/messenger":                      {"/admin/messenger"},
		"/admin/messenger/channels/{channelId}": {channel},
		"/admin/invites":                        {"/admin/invites"},
	}
}
