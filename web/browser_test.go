package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
	bt "github.com/hoard/hoard/web/browsertest"
)

// TestBrowserUserJourney: register from an invite link, search, open a
// package, send it, upload files and watch the status, change settings, sign
// out and back in.
func TestBrowserUserJourney(t *testing.T) {
	e := newEnv(t)
	ctx := bt.New(t)
	errs := bt.CollectErrors(t, ctx)
	defer errs.Check(t, "the journey's pages")
	pk := e.seedCatalog()
	e.publishTarget(true) // uploads have somewhere to go
	code := e.invite(1, time.Hour)
	base := e.ts.URL

	// Every step that makes the page navigate waits for the new page
	// (bt.Follow): the next step must not start while the browser is still
	// loading, or its own navigation aborts (net::ERR_ABORTED under load).
	bt.Do(t, ctx, chromedp.Navigate(base+"/register?code="+code),
		chromedp.WaitVisible(chromedp.CSS(`input[name=email]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=email]`), "walker@example.com"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "a long enough password"),
		chromedp.SendKeys(chromedp.CSS(`input[name=confirm]`), "a long enough password"))
	if got := bt.Text(t, ctx, "#password-rules"); !strings.Contains(got, "10 to 256 characters") {
		t.Fatalf("the registration form states no password rules: %q", got)
	}
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`form button[type=submit]`)))
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`input[name=q]`)))
	if got := bt.Text(t, ctx, "ul.grid"); !strings.Contains(got, "Red Dragon Pack.zip") {
		t.Fatalf("catalog after registration: %q", got)
	}

	// Search, then open the package.
	bt.Do(t, ctx, chromedp.SendKeys(chromedp.CSS(`input[name=q]`), "knight"))
	bt.Follow(t, ctx, chromedp.Submit(chromedp.CSS(`input[name=q]`)))
	bt.Do(t, ctx,
		// The result page no longer lists the dragon packages.
		chromedp.WaitNotPresent(chromedp.CSS(fmt.Sprintf(`a[href="/packages/%d"]`, pk["Red Dragon Pack.zip"].ID))),
		chromedp.WaitVisible(chromedp.CSS(`ul.grid li`)))
	if got := bt.Text(t, ctx, "ul.grid"); !strings.Contains(got, "Knight Helmet.rar") || strings.Contains(got, "Dragon") {
		t.Fatalf("search results: %q", got)
	}
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`ul.grid li a[href^="/packages/"]`)))
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`article.package h1`)))
	if got := bt.Text(t, ctx, "article.package h1"); got != "Knight Helmet.rar" {
		t.Fatalf("package page title %q", got)
	}

	// Upload two files and watch the status page.
	dir := t.TempDir()
	var files []string
	for _, n := range []string{"Castle.zip", "Castle.pdf"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("content of "+n), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	bt.Do(t, ctx, chromedp.Navigate(base+"/uploads"), chromedp.WaitVisible(chromedp.CSS(`input[type=file]`)),
		chromedp.SetUploadFiles(chromedp.CSS(`input[type=file]`), files))
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`form[data-upload] button[type=submit]`)))
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`[data-upload-state]`)))
	if got := bt.Text(t, ctx, "[data-upload-state]"); got != "processing" {
		t.Fatalf("upload phase %q", got)
	}
	if got := bt.Text(t, ctx, "[data-upload-poll]"); !strings.Contains(got, "Castle.zip") || !strings.Contains(got, "Castle.pdf") {
		t.Fatalf("upload files: %q", got)
	}
	// The page says how long files are kept; once the upload is complete
	// (the page reloads by itself) its owner deletes it, files and all.
	if got := bt.Text(t, ctx, "[data-upload-retention]"); !strings.Contains(got, "kept on the server for 7 days") {
		t.Fatalf("retention: %q", got)
	}
	loc := bt.Run(t, ctx, chromedp.Location())
	upID, err := strconv.ParseInt(loc[strings.LastIndexByte(loc, '/')+1:], 10, 64)
	if err != nil {
		t.Fatalf("upload page %s: %v", loc, err)
	}
	if err := e.db.SetManualUploadStatus(context.Background(), upID, hoard.UploadFailed, "the test ends it"); err != nil {
		t.Fatal(err)
	}
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`[data-upload-delete]`)))
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`[data-upload-delete]`)))
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`p.notice`)))
	if got := bt.Text(t, ctx, "p.notice"); !strings.HasPrefix(got, "Upload deleted") {
		t.Fatalf("after delete: %q", got)
	}
	_, ferr := e.db.FindManualUpload(context.Background(), upID)
	if _, serr := os.Stat(filepath.Join(e.srv.deps.UploadDir, strconv.FormatInt(upID, 10))); hoard.ErrorCode(ferr) != hoard.ENOTFOUND || !os.IsNotExist(serr) {
		t.Fatalf("deleted upload: row %v, files %v", ferr, serr)
	}

	// Get a messenger link code.
	bt.Do(t, ctx, chromedp.Navigate(base+"/settings"), chromedp.WaitVisible(chromedp.CSS(`form[action="/settings/messenger/link-code"] button`)))
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`form[action="/settings/messenger/link-code"] button`)))
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`p.code`)))
	if got := bt.Text(t, ctx, "p.code"); len(got) != linkCodeLen {
		t.Fatalf("link code %q", got)
	}

	// Sign out and in again.
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)))
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`form[action="/login"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=email]`), "walker@example.com"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "a long enough password"))
	bt.Follow(t, ctx, chromedp.Submit(chromedp.CSS(`input[name=password]`)))
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`input[name=q]`)))
}

// TestBrowserAdminJourney: bulk-edit tags, create and copy an invite,
// dismiss a notification, repair one from the bell, watch the worker panel, trigger a cycle, toggle a
// channel, open the queue UI.
func TestBrowserAdminJourney(t *testing.T) {
	e := newEnv(t)
	ctx := bt.New(t)
	errs := bt.CollectErrors(t, ctx)
	defer errs.Check(t, "the journey's pages")
	pk := e.seedCatalog()
	admin, password := e.user(hoard.RoleAdmin)
	base := e.ts.URL
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{Origin: base,
			Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.db.CreateNotification(context.Background(), &hoard.Notification{Type: hoard.NotifyChannelAccessLost,
		Severity: hoard.SeverityWarning, Title: "Lost access to Minis", DedupKey: "browser"}); err != nil {
		t.Fatal(err)
	}
	signIn(t, ctx, base, admin.Email, password)
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`ul.grid`)))
	if got := bt.Text(t, ctx, "[data-bell-count]"); got != "1" {
		t.Fatalf("bell badge %q", got)
	}

	// Bulk tag edit: select two packages (the bar counts them), add a tag;
	// the page says what changed.
	a, b := pk["Red Dragon Pack.zip"], pk["Knight Helmet.rar"]
	bt.Do(t, ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`input.pick[value="%d"]`, a.ID))),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`input.pick[value="%d"]`, b.ID))),
		chromedp.Poll[chromedp.Void](`document.querySelector("[data-selection-count]").textContent === "2 selected"`, chromedp.WithPollingTimeout(5*time.Second)),
		chromedp.SendKeys(chromedp.CSS(`input[name=tags]`), "Browser, Bulk"))
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`#bulk button[type=submit]:not([formaction])`)))
	if got := bt.Text(t, ctx, "p.notice"); got != "Tags added to 2 packages." {
		t.Fatalf("notice after the bulk edit: %q", got)
	}
	for _, id := range []int64{a.ID, b.ID} {
		p, _ := e.db.FindPackageByID(context.Background(), id)
		if !slices.Contains(p.Tags, "Browser") || !slices.Contains(p.Tags, "Bulk") {
			t.Fatalf("tags of %d after the bulk edit: %q", id, p.Tags)
		}
	}
	// Select all, then clear.
	bt.Do(t, ctx, chromedp.Click(chromedp.CSS(`[data-select-all]`)),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("input.pick:checked").length === document.querySelectorAll("input.pick").length`,
			chromedp.WithPollingTimeout(5*time.Second)),
		chromedp.Click(chromedp.CSS(`[data-select-none]`)),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("input.pick:checked").length === 0 && document.querySelector("[data-selection-count]").textContent === "None selected"`,
			chromedp.WithPollingTimeout(5*time.Second)))

	// Groups: create one from two selected packages, then merge another
	// group into it in two steps.
	bt.Do(t, ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`ul.grid`)),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`input.pick[value="%d"]`, a.ID))),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`input.pick[value="%d"]`, b.ID))),
		chromedp.SendKeys(chromedp.CSS(`#bulk input[name=name]`), "Browser group"))
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`#bulk button[formaction="/groups"]`)))
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`article.package h1`)))
	if got := bt.Text(t, ctx, "article.package h1"); got != "Browser group" {
		t.Fatalf("group page title %q", got)
	}
	target := bt.Run(t, ctx, chromedp.Location())
	extra := &hoard.Package{FileName: "Knight Shield.zip", FileSize: 5, ArchiveType: hoard.ArchiveZIP, SourceChannelID: b.SourceChannelID,
		ContentHash: strings.Repeat("e", 64)}
	if err := e.db.CreatePackage(context.Background(), extra); err != nil {
		t.Fatal(err)
	}
	source, err := e.db.CreateManualGroup(context.Background(), "Others", []int64{pk["Dragon_Bust_v2.stl"].ID, extra.ID})
	if err != nil {
		t.Fatal(err)
	}
	bt.Do(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/groups/%d", base, source.ID)), chromedp.WaitVisible(chromedp.CSS(`form[action$="/merge/start"] button`)))
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`form[action$="/merge/start"] button`)))
	if got := bt.Text(t, ctx, "p.notice"); !strings.Contains(got, "open the group to merge it into") {
		t.Fatalf("after Start merge: %q", got)
	}
	bt.Do(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/groups/%d", base, source.ID)), chromedp.WaitVisible(chromedp.CSS(`[data-merge-next]`)),
		chromedp.Navigate(target), chromedp.WaitVisible(chromedp.CSS(`form[action$="/merge"] button`)))
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`form[action$="/merge"] button`)))
	if _, err := e.db.FindGroupByID(context.Background(), source.ID); hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Fatalf("the merged group is still there: %v", err)
	}
	if got := bt.Text(t, ctx, "article.package"); !strings.Contains(got, "4 packages") {
		t.Fatalf("merged group: %q", got)
	}

	// Invites: create one, copy its link.
	bt.Do(t, ctx, chromedp.Navigate(base+"/admin/invites"), chromedp.WaitVisible(chromedp.CSS(`form[action="/admin/invites"] button`)))
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`form[action="/admin/invites"] button`)))
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`p.notice`)), // the new page, not the old one's rows
		chromedp.Click(chromedp.CSS(`[data-copy]`)))
	// The copy is asynchronous: wait until the clipboard holds the link.
	var link string
	bt.Eventually(t, "invite link copied", func() bool {
		link, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
		return link != ""
	})
	if !strings.HasPrefix(link, base+"/register?code=") {
		t.Fatalf("copied link %q", link)
	}

	// Notifications: dismiss from the page.
	bt.Do(t, ctx, chromedp.Navigate(base+"/notifications"), chromedp.WaitVisible(chromedp.CSS(`li.note`)))
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`form[action$="/dismiss"] button`)))
	bt.Do(t, ctx, chromedp.WaitNotPresent(chromedp.CSS(`li.note`)))
	if got := bt.Text(t, ctx, "ul.notes"); !strings.Contains(got, "No notifications") {
		t.Fatalf("after dismiss: %q", got)
	}
	// The bell's list on any page: a MISSING_PART alert repaired from it.
	if _, err := e.db.CreateNotification(context.Background(), &hoard.Notification{Type: hoard.NotifyMissingPart,
		Severity: hoard.SeverityError, Title: "Missing part of <Red Dragon>", PackageID: a.ID, DedupKey: "browser-repair"}); err != nil {
		t.Fatal(err)
	}
	bt.Do(t, ctx, chromedp.Navigate(base+"/crowdfunds"), chromedp.Click(chromedp.CSS(`[data-bell]`)),
		chromedp.WaitVisible(chromedp.CSS(`.bell-list li.note`)))
	if got := bt.Text(t, ctx, ".bell-list li.note strong"); got != "Missing part of <Red Dragon>" {
		t.Fatalf("bell list title %q", got)
	}
	bt.Run(t, ctx, chromedp.Evaluate[bool](`[...document.querySelectorAll(".bell-list button")].find(b => b.textContent === "Repair").click(), true`))
	bt.Do(t, ctx, chromedp.Poll[chromedp.Void](`document.querySelector(".bell-list").textContent.includes("Repair queued")`,
		chromedp.WithPollingTimeout(10*time.Second)))
	if jobs := e.jobs("repair_package"); len(jobs) != 1 || jobs[0].Args["package_id"] != float64(a.ID) {
		t.Fatalf("repair_package jobs after Repair in the bell: %+v", jobs)
	}

	// Worker panel (live JSON), Trigger now (confirmed in place), and the
	// queue UI.
	bt.Do(t, ctx, chromedp.Navigate(base+"/admin/messenger"), chromedp.WaitVisible(chromedp.CSS(`[data-worker-state]`)),
		chromedp.Poll[chromedp.Void](`document.querySelector("[data-worker-state]").textContent.startsWith("Idle")`,
			chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Click(chromedp.CSS(`form[action^="/api/ingestion/trigger"] button`)),
		chromedp.Poll[chromedp.Void](`document.querySelector("form[action^='/api/ingestion/trigger'] [data-action-result]").textContent.includes("cycle queued")`,
			chromedp.WithPollingTimeout(10*time.Second)))
	if loc := bt.Run(t, ctx, chromedp.Location()); loc != base+"/admin/messenger" {
		t.Fatalf("Trigger now left the page for %s", loc)
	}
	if jobs := e.jobs("ingest_cycle"); len(jobs) != 1 || jobs[0].Args["trigger"] != string(hoard.TriggerManual) {
		t.Fatalf("ingest_cycle jobs after Trigger now: %+v", jobs)
	}
	// Rescan from the channel list: confirmed, then posted in the background.
	rescan := fmt.Sprintf(`form[action="/admin/messenger/channels/%d/rescan"]`, a.SourceChannelID)
	bt.Do(t, ctx, chromedp.Click(chromedp.CSS(rescan+` button`)),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector('%s [data-action-result]').textContent.startsWith("Rescan queued")`, rescan),
			chromedp.WithPollingTimeout(10*time.Second)))
	if jobs := e.jobs("rescan_channel"); len(jobs) != 1 || jobs[0].Args["channel_id"] != float64(a.SourceChannelID) {
		t.Fatalf("rescan_channel jobs after Rescan: %+v", jobs)
	}

	// Add a source channel by @username: the request shows as PENDING, and
	// the page follows it until the worker records the outcome.
	e.signedInAccount("+15550000001")
	bt.Do(t, ctx, chromedp.Navigate(base+"/admin/messenger"), chromedp.WaitVisible(chromedp.CSS(`form[data-join-form]`)),
		chromedp.SendKeys(chromedp.CSS(`form[data-join-form] input[name=ref]`), "@OpenShelf"),
		chromedp.SendKeys(chromedp.CSS(`form[data-join-form] input[name=category]`), "Prints"))
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`form[data-join-form] button`)))
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`p.notice`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-join-status="PENDING"]`)))
	if got := bt.Text(t, ctx, `tr[data-join-status="PENDING"]`); !strings.Contains(got, "@openshelf") || !strings.Contains(got, "Prints") {
		t.Fatalf("join row %q", got)
	}
	joins, err := e.db.ListChannelJoins(context.Background(), 1)
	if err != nil || len(joins) != 1 || len(e.jobs("join_channel")) != 1 {
		t.Fatalf("joins %+v (%v), jobs %+v", joins, err, e.jobs("join_channel"))
	}
	if _, err := e.db.FinishChannelJoin(context.Background(), joins[0].ID, hoard.JoinJoined, 0, "Open Shelf", ""); err != nil {
		t.Fatal(err)
	}
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`tr[data-join-status="JOINED"]`)))
	if got := bt.Text(t, ctx, `tr[data-join-status="JOINED"]`); !strings.Contains(got, "Open Shelf") {
		t.Fatalf("joined row %q", got)
	}

	// Rebuild from destination: start it with the button, then watch the
	// panel follow the run's progress until it ends.
	if err := e.db.UpsertChannel(context.Background(), &hoard.Channel{PlatformID: 777001, Title: "Archive", Kind: hoard.ChannelDestination}); err != nil {
		t.Fatal(err)
	}
	bt.Do(t, ctx, chromedp.Navigate(base+"/admin/messenger"), chromedp.WaitEnabled(chromedp.CSS(`[data-rebuild-start]`)))
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`[data-rebuild-start]`)))
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`p.notice`)),
		chromedp.Poll[chromedp.Void](`document.querySelector("[data-rebuild-state]").textContent.startsWith("Running")`,
			chromedp.WithPollingTimeout(10*time.Second)))
	if !bt.Run(t, ctx, chromedp.Evaluate[bool](`document.querySelector("[data-rebuild-start]").disabled`)) {
		t.Fatal("the rebuild button is enabled while a rebuild runs")
	}
	rb, err := e.db.FindLatestRebuild(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.AdvanceRebuild(context.Background(), rb.ID, hoard.RebuildCounters{MessagesScanned: 120, PackagesCreated: 7}, 120); err != nil {
		t.Fatal(err)
	}
	bt.Do(t, ctx, chromedp.Poll[chromedp.Void](`document.querySelector("[data-rebuild-counters]").textContent.includes("created 7")`,
		chromedp.WithPollingTimeout(10*time.Second)))
	if _, err := e.db.FinishRebuild(context.Background(), rb.ID, hoard.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	bt.Do(t, ctx, chromedp.Poll[chromedp.Void](`document.querySelector("[data-rebuild-state]").textContent.startsWith("Last rebuild completed")`,
		chromedp.WithPollingTimeout(10*time.Second)))

	errs.Check(t, "the journey's pages")
	bt.Do(t, ctx, chromedp.Navigate(base+"/admin/river/"),
		chromedp.Poll[chromedp.Void](`document.querySelector("#root").innerText.includes("Jobs")`, chromedp.WithPollingTimeout(15*time.Second)))
	title := bt.Run(t, ctx, chromedp.Title())
	if !strings.Contains(strings.ToLower(title), "river") {
		t.Fatalf("queue UI title %q", title)
	}
	errs.Check(t, "the River UI", bt.RiverUIEvalProbe)
}

// TestBrowserChoosePreview: a curator picks an image of the archive as the
// preview; the page polls the extraction, swaps the preview in when it is
// done and shows the error when it fails. The worker's part is played by
// the test, on the database.
func TestBrowserChoosePreview(t *testing.T) {
	e := newEnv(t)
	ctx := bt.New(t)
	errs := bt.CollectErrors(t, ctx)
	defer errs.Check(t, "the journey's pages")
	bg := context.Background()
	admin, password := e.user(hoard.RoleAdmin)
	dest := &hoard.Channel{PlatformID: 4242, Title: "Archive", Kind: hoard.ChannelDestination}
	if err := e.db.UpsertChannel(bg, dest); err != nil {
		t.Fatal(err)
	}
	p := &hoard.Package{FileName: "Castle.zip", FileSize: 1000, ArchiveType: hoard.ArchiveZIP}
	if err := e.db.CreatePackage(bg, p); err != nil {
		t.Fatal(err)
	}
	if err := e.db.SetPackageDestination(bg, p.ID, dest.ID, []int64{7}); err != nil {
		t.Fatal(err)
	}
	if err := e.db.ReplacePackageFiles(bg, p.ID, []hoard.PackageFile{{Path: "castle.stl", Size: 900},
		{Path: "renders/front.png", Size: 5000}, {Path: "renders/side.jpg", Size: 4000}}); err != nil {
		t.Fatal(err)
	}
	base := e.ts.URL
	signIn(t, ctx, base, admin.Email, password)
	bt.Do(t, ctx, chromedp.Navigate(fmt.Sprintf("%s/packages/%d", base, p.ID)),
		chromedp.WaitVisible(chromedp.CSS(`[data-preview-chooser]`)),
		chromedp.Click(chromedp.CSS(`[data-preview-chooser] li:nth-child(1) button`)))
	var x *hoard.PreviewExtraction
	bt.Eventually(t, "the extraction is queued", func() bool {
		var err error
		x, err = e.db.FindLatestPreviewExtraction(bg, p.ID)
		return err == nil
	})
	bt.Eventually(t, "the page shows the queued extraction", func() bool {
		return strings.Contains(bt.Text(t, ctx, "[data-extraction-status]"), "renders/front.png")
	})
	// The worker finishes it.
	img := pngBytes(t)
	if err := e.db.SetPackagePreview(bg, p.ID, img, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.FinishPreviewExtraction(bg, x.ID, hoard.ExtractionDone, "ranged", 2048, ""); err != nil {
		t.Fatal(err)
	}
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`[data-package-preview] img[src="/packages/%d/preview?v=%d"]`, p.ID, x.ID))))
	if got := bt.Text(t, ctx, "[data-extraction-status]"); got != "Preview set from renders/front.png." {
		t.Fatalf("status after DONE: %q", got)
	}

	// A failure shows its message.
	bt.Do(t, ctx, chromedp.Click(chromedp.CSS(`[data-preview-chooser] li:nth-child(2) button`)))
	var y *hoard.PreviewExtraction
	bt.Eventually(t, "the second extraction is queued", func() bool {
		var err error
		y, err = e.db.FindLatestPreviewExtraction(bg, p.ID)
		return err == nil && y.ID != x.ID
	})
	if _, err := e.db.FinishPreviewExtraction(bg, y.ID, hoard.ExtractionFailed, "ranged", 1024, "The image could not be extracted: entry is encrypted."); err != nil {
		t.Fatal(err)
	}
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`[data-extraction-status].bad`)))
	if got := bt.Text(t, ctx, "[data-extraction-status]"); got != "Could not use renders/side.jpg: The image could not be extracted: entry is encrypted." {
		t.Fatalf("status after FAILED: %q", got)
	}
	if os.Getenv("HOARD_SCREENSHOT") != "" {
		if shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			_ = os.WriteFile(os.Getenv("HOARD_SCREENSHOT"), shot, 0o644)
		}
	}
}

// TestBrowserRiverUIUnderPolicy: the River UI mounted under /admin/river
// works under the same security headers as every other page: it renders its
// pages, and the browser reports no violation of the content security
// policy (each one is turned into a console error the collector sees).
func TestBrowserRiverUIUnderPolicy(t *testing.T) {
	e := newEnv(t)
	ctx := bt.New(t)
	if _, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{
		Source: `document.addEventListener("securitypolicyviolation", ev =>
			console.error("CSP violation: " + ev.violatedDirective + " blocked " + ev.blockedURI));`}); err != nil {
		t.Fatal(err)
	}
	errs := bt.CollectErrors(t, ctx)
	defer errs.Check(t, "the River UI", bt.RiverUIEvalProbe)
	admin, password := e.user(hoard.RoleAdmin)
	base := e.ts.URL
	signIn(t, ctx, base, admin.Email, password)
	for _, page := range []struct{ path, text string }{{riverUIJobs, "Jobs"}, {"/admin/river/queues", "Queues"}} {
		bt.Do(t, ctx, chromedp.Navigate(base+page.path),
			chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector("#root").innerText.includes(%q)`, page.text),
				chromedp.WithPollingTimeout(15*time.Second)))
	}
}

// signIn signs in through the form and waits for the catalog it leads to.
// TestBrowserWorkerPanelSkipsTheTopicNamed: with two forum topics in
// progress the worker panel lists both, each with a skip button naming it;
// pressing Terrain's disables Terrain only, and the page says so.
func TestBrowserWorkerPanelSkipsTheTopicNamed(t *testing.T) {
	e := newEnv(t)
	ctx := bt.New(t)
	errs := bt.CollectErrors(t, ctx)
	defer errs.Check(t, "the worker panel")
	bg := context.Background()
	ch := &hoard.Channel{PlatformID: 7, Title: "STL Emporium", Kind: hoard.ChannelSource, IsForum: true}
	if err := e.db.UpsertChannel(bg, ch); err != nil {
		t.Fatal(err)
	}
	acc, _ := e.db.CreateAccount(bg, "+15550002")
	m, err := e.db.UpsertChannelMap(bg, acc.ID, ch.ID, 1, hoard.MapReader)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = e.db.UpsertTopic(bg, m.ID, 33, "Dragons", false)
	_, _ = e.db.UpsertTopic(bg, m.ID, 44, "Terrain", false)
	for _, topic := range []int{33, 44} {
		storetest.Job(t, e.db, storetest.JobOpts{Kind: "scan_topic", Queue: "ingest",
			Args: map[string]any{"map_id": m.ID, "topic_id": topic, "run_id": 1}})
	}
	admin, password := e.user(hoard.RoleAdmin)
	base := e.ts.URL
	signIn(t, ctx, base, admin.Email, password)
	buttons := `[...document.querySelectorAll("[data-worker-topics] button")].map(b => b.textContent)`
	bt.Do(t, ctx, chromedp.Navigate(base+"/admin/messenger"),
		chromedp.Poll[chromedp.Void](buttons+`.length === 2`, chromedp.WithPollingTimeout(10*time.Second)))
	want := []string{"Skip and disable “Dragons” (STL Emporium)", "Skip and disable “Terrain” (STL Emporium)"}
	if got := bt.Run(t, ctx, chromedp.Evaluate[[]string](buttons)); !slices.Equal(got, want) {
		t.Fatalf("skip buttons %q, want %q", got, want)
	}
	bt.Follow(t, ctx, chromedp.Click(chromedp.Search(`//button[contains(text(), "Terrain")]`)))
	if got := bt.Text(t, ctx, "p.notice"); !strings.HasPrefix(got, "Topic disabled") {
		t.Errorf("notice %q", got)
	}
	on33, _ := e.db.IsTopicFetchEnabled(bg, m.ID, 33)
	on44, _ := e.db.IsTopicFetchEnabled(bg, m.ID, 44)
	if !on33 || on44 {
		t.Errorf("fetching Dragons %v, Terrain %v; want only Terrain off", on33, on44)
	}
	bt.Do(t, ctx, chromedp.Poll[chromedp.Void](buttons+`.length === 1`, chromedp.WithPollingTimeout(10*time.Second)))
}

func signIn(t *testing.T, ctx context.Context, base, email, password string) {
	t.Helper()
	bt.Do(t, ctx, chromedp.Navigate(base+"/login"),
		chromedp.SendKeys(chromedp.CSS(`input[name=email]`), email),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), password))
	bt.Follow(t, ctx, chromedp.Submit(chromedp.CSS(`input[name=password]`)))
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`input[name=q]`)))
}

// TestBrowserWorkerPanelShowsEachFilesPhase: a file whose job uploads its
// second part of four shows one line naming it once, with the phase, the
// part, the bytes, the rate and the time left; the state line counts the
// files in flight instead of repeating a name.
func TestBrowserWorkerPanelShowsEachFilesPhase(t *testing.T) {
	e := newEnv(t)
	ctx := bt.New(t)
	errs := bt.CollectErrors(t, ctx)
	defer errs.Check(t, "the worker panel")
	bg := context.Background()
	run, err := e.db.CreateRun(bg, hoard.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Job(t, e.db, storetest.JobOpts{Kind: "upload_part", Queue: "transfer", Metadata: map[string]any{"file_progress": map[string]any{
		"run_id": run.ID, "file": "Mammoth Diorama.zip", "phase": "uploading", "part": 2, "parts": 4, "bytes": 268435456,
		"total_bytes": 536870912, "start_bytes": 0, "phase_started_at": "2025-01-01T12:00:00Z", "updated_at": "2025-01-01T12:00:10Z"}}})
	admin, password := e.user(hoard.RoleAdmin)
	base := e.ts.URL
	signIn(t, ctx, base, admin.Email, password)
	lines := `[...document.querySelectorAll("[data-worker-files] li")].map(li => li.textContent)`
	bt.Do(t, ctx, chromedp.Navigate(base+"/admin/messenger"),
		chromedp.Poll[chromedp.Void](lines+`.length === 1`, chromedp.WithPollingTimeout(10*time.Second)))
	want := []string{"Mammoth Diorama.zip — uploading part 2 of 4 · 256 MiB of 512 MiB (50 %) · 26 MiB/s · 10 s left "}
	if got := bt.Run(t, ctx, chromedp.Evaluate[[]string](lines)); !slices.Equal(got, want) {
		t.Errorf("files in flight %q, want %q", got, want)
	}
	if got := bt.Text(t, ctx, "[data-worker-state]"); got != "Running: 1 file in flight" {
		t.Errorf("state %q", got)
	}
}

// TestBrowserCatalogAnnouncesNewPackages: a package indexed while the
// catalog is open (a cycle running) is announced on the page without a
// reload, "1 new package — show"; the link shows it. A search page does
// not poll.
func TestBrowserCatalogAnnouncesNewPackages(t *testing.T) {
	e := newEnv(t)
	e.seedCatalog()
	e.waitCatalogWatch()
	ctx := bt.New(t)
	errs := bt.CollectErrors(t, ctx)
	defer errs.Check(t, "the catalog")
	bg := context.Background()
	if _, err := e.db.CreateRun(bg, hoard.TriggerManual); err != nil {
		t.Fatal(err)
	}
	user, password := e.user(hoard.RoleUser)
	base := e.ts.URL
	signIn(t, ctx, base, user.Email, password)
	bt.Do(t, ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`ul.grid`)))
	if visible := bt.Run(t, ctx, chromedp.Evaluate[bool](`!document.querySelector("[data-new-packages]").hidden`)); visible {
		t.Fatal("new packages announced before any was indexed")
	}
	p := &hoard.Package{FileName: "Mammoth Diorama.zip", FileSize: 2_300_000_000, ArchiveType: hoard.ArchiveZIP,
		ContentHash: fmt.Sprintf("%064x", 99), Creator: "Mammoth Factory", Tags: []string{"STL"}}
	if err := e.db.CreatePackage(bg, p); err != nil {
		t.Fatal(err)
	}
	const announced = `document.querySelector("[data-new-packages-show]").textContent`
	bt.Do(t, ctx, chromedp.Poll[chromedp.Void](announced+` === "1 new package — show"`, chromedp.WithPollingTimeout(15*time.Second)))
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`[data-new-packages-show]`)))
	if grid := bt.Text(t, ctx, "ul.grid"); !strings.Contains(grid, "Mammoth Diorama.zip") {
		t.Errorf("after show, the catalog lacks the new package:\n%s", grid)
	}
	if n := bt.Run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("[data-new-packages]").length`)); n != 1 {
		t.Errorf("the catalog has %d announcements, want 1", n)
	}
	bt.Do(t, ctx, chromedp.Navigate(base+"/?q=dragon"), chromedp.WaitVisible(chromedp.CSS(`ul.grid`)))
	if n := bt.Run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("[data-new-packages]").length`)); n != 0 {
		t.Errorf("a search page polls for new packages")
	}
}
