package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gotd/td/bin"
	"github.com/gotd/td/tg"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/demo"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/store/storetest"
	bt "github.com/hoard/hoard/web/browsertest"
)

// TestRepairsInBrowser: an administrator repairs, from the notifications
// page in headless chromium, a MISSING_PART (one of Castle Walls.zip's
// three recorded posts lost; the audit of a cycle triggered from the worker
// panel finds it) and a HASH_MISMATCH (raised as verify raises it, with its
// package; jobs' TestRepairOfAHashMismatchRepublishesIntoTheSamePackage
// makes a real one), and retries a manual upload the platform refused from
// its page. Each ends in a published package: the repaired ones in their
// own rows with new posts, their stale posts deleted from the destination;
// the upload COMPLETED with its package. `hoard web` and `hoard worker`
// run as processes against the test's emulator.
func TestRepairsInBrowser(t *testing.T) {
	t.Parallel()
	bt.ChromiumPath(t)
	w := newBotWorld(t, botSeedOptions{}, fastBotLimits)
	if sum := w.ingest(t); sum.RunStatus != "COMPLETED" {
		t.Fatalf("ingestion: %+v", sum)
	}
	ctx := context.Background()
	castle, helmet := w.packageID(t, "Castle Walls.zip"), w.packageID(t, "Knight Helmet.stl")
	before := map[int64][]int64{}
	for _, id := range []int64{castle, helmet} {
		p, err := w.db.FindPackageByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		before[id] = p.DestMessageIDs
		if id == castle {
			// One of the three posts is no longer recorded: what the audit
			// calls MISSING_PART.
			if len(p.DestMessageIDs) != 3 {
				t.Fatalf("Castle Walls.zip was published as %v, want three parts", p.DestMessageIDs)
			}
			before[id] = p.DestMessageIDs[:2]
			if err := w.db.SetPackageDestination(ctx, id, p.DestChannelID, before[id]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := w.db.CreateNotification(ctx, &hoard.Notification{Type: hoard.NotifyHashMismatch, Severity: hoard.SeverityError,
		PackageID: helmet, Title: "Hash mismatch: Knight Helmet.stl",
		Message: "Knight Helmet.stl was downloaded as one hash but the posted parts read back as another."}); err != nil {
		t.Fatal(err)
	}

	webAddr := freeAddr(t)
	const email, password = "admin@example.com", "a long enough password"
	w.start(t, "web", map[string]string{"LISTEN_ADDR": webAddr, "HOARD_ADMIN_EMAIL": email, "HOARD_ADMIN_PASSWORD": password}, "web")
	w.start(t, "worker", map[string]string{"WORKER_MAX_SKIP_ATTEMPTS": "1"}, "worker")
	base := "http://" + webAddr
	signIn(t, base, email, password) // waits for the web to answer

	b := bt.New(t)
	errs := bt.CollectErrors(t, b)
	bt.Do(t, b, chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.CSS(`input[name=email]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=email]`), email), chromedp.SendKeys(chromedp.CSS(`input[name=password]`), password))
	bt.Follow(t, b, chromedp.Submit(chromedp.CSS(`input[name=password]`)))

	// A cycle from the worker panel; its audit finds the missing part.
	bt.Do(t, b, chromedp.Navigate(base+"/admin/messenger"), chromedp.WaitVisible(chromedp.CSS(`form[action^="/api/ingestion/trigger"] button`)),
		chromedp.Click(chromedp.CSS(`form[action^="/api/ingestion/trigger"] button`)))
	waitUntil(t, "the audit's MISSING_PART", 90*time.Second, func() bool {
		n := 0
		for _, note := range storetest.Notifications(t, w.db) {
			if note.Type == hoard.NotifyMissingPart && note.PackageID == castle {
				n++
			}
		}
		return n == 1
	})
	w.waitCyclesDone(t)

	for _, r := range []struct {
		typ     hoard.NotificationType
		pkg     int64
		name    string
		parts   int
		comment string
	}{
		{hoard.NotifyMissingPart, castle, "Castle Walls.zip", 3, "missing part"},
		{hoard.NotifyHashMismatch, helmet, "Knight Helmet.stl", 1, "hash mismatch"},
	} {
		t.Run(r.comment, func(t *testing.T) {
			li := fmt.Sprintf(`//li[contains(@class,"note")][.//span[text()=%q]][.//a[@href="/packages/%d"]]`, r.typ, r.pkg)
			bt.Do(t, b, chromedp.Navigate(base+"/notifications"), chromedp.WaitVisible(chromedp.Search(li)))
			bt.Follow(t, b, chromedp.Click(chromedp.Search(li+`//button[text()="Repair"]`)))
			if got := bt.Text(t, b, "main"); !strings.Contains(got, "Repair queued") {
				t.Errorf("after Repair: %q", got)
			}
			var p *hoard.Package
			waitUntil(t, r.name+" published again, its stale posts deleted", 120*time.Second, func() bool {
				var err error
				p, err = w.db.FindPackageByID(ctx, r.pkg)
				if err != nil || len(p.DestMessageIDs) != r.parts || slices.Contains(before[r.pkg], p.DestMessageIDs[0]) {
					return false
				}
				stale, err := w.db.ListStalePosts(ctx, r.pkg)
				return err == nil && len(stale) == 0
			})
			w.waitCyclesDone(t)
			docs := w.env.Emu.Documents(w.env.Emu.DestinationID())
			for _, id := range before[r.pkg] {
				if slices.Contains(docs, int(id)) {
					t.Errorf("stale post %d of %s is still in the destination", id, r.name)
				}
			}
			for _, id := range p.DestMessageIDs {
				if !slices.Contains(docs, int(id)) {
					t.Errorf("new post %d of %s is not in the destination %v", id, r.name, docs)
				}
			}
			bt.Do(t, b, chromedp.Navigate(fmt.Sprintf("%s/packages/%d", base, r.pkg)), chromedp.WaitVisible(chromedp.CSS(`article.package`)))
			if got, want := bt.Text(t, b, "article.package"), fmt.Sprint(p.DestMessageIDs[len(p.DestMessageIDs)-1]); !strings.Contains(got, want) {
				t.Errorf("package page of %s does not show its new post %s: %q", r.name, want, got)
			}
			errs.Check(t, "repair of "+r.comment)
		})
	}

	// A manual upload the platform refuses ends FAILED with the reason;
	// the notification leads to its page, whose retry publishes it.
	file := filepath.Join(t.TempDir(), "Watchtower.zip")
	data, err := demo.Zip(map[string][]byte{"Watchtower/tower.stl": demo.STL("tower")})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	w.env.Emu.InjectFault(emulator.Fault{Method: "messages.sendMedia", Error: "MEDIA_INVALID", Match: uploadNamed("Watchtower.zip")})
	bt.Do(t, b, chromedp.Navigate(base+"/uploads"), chromedp.WaitVisible(chromedp.CSS(`form[data-upload] input[type=file]`)),
		chromedp.SetUploadFiles(chromedp.CSS(`form[data-upload] input[type=file]`), []string{file}))
	bt.Follow(t, b, chromedp.Click(chromedp.CSS(`form[data-upload] button[type=submit]`)))
	page := bt.Run(t, b, chromedp.Location())
	var upID int64
	if _, err := fmt.Sscanf(page, base+"/uploads/%d", &upID); err != nil {
		t.Fatalf("the upload went to %s", page)
	}
	// The page polls while the upload is processed and reloads when it is
	// complete; the test looks at it once the database says so.
	uploadEnds := func(status hoard.UploadStatus) {
		t.Helper()
		waitUntil(t, "the upload to end "+string(status), 90*time.Second, func() bool {
			up, err := w.db.FindManualUpload(ctx, upID)
			return err == nil && up.Status == status
		})
		bt.Do(t, b, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`[data-upload-poll][data-phase="complete"]`)))
	}
	uploadEnds(hoard.UploadFailed)
	bt.Do(t, b, chromedp.WaitVisible(chromedp.CSS(`[data-upload-retry]`)))
	if got := bt.Text(t, b, "main"); !strings.Contains(got, "FAILED") || !strings.Contains(got, "MEDIA_INVALID") {
		t.Errorf("failed upload page: %q", got)
	}
	errs.Check(t, "failed upload")
	bt.Do(t, b, chromedp.Navigate(base+"/notifications"), chromedp.WaitVisible(chromedp.CSS(`ul.notes`)))
	bt.Follow(t, b, chromedp.Click(chromedp.Search(`//li[.//span[text()="UPLOAD_FAILED"]]//a[text()="Open upload"]`)))
	w.env.Emu.ClearFaults()
	bt.Follow(t, b, chromedp.Click(chromedp.CSS(`[data-upload-retry]`)))
	if got := bt.Text(t, b, "main"); !strings.Contains(got, "Retry queued") {
		t.Errorf("after Retry: %q", got)
	}
	uploadEnds(hoard.UploadCompleted)
	got := bt.Text(t, b, "main")
	if !strings.Contains(got, "(COMPLETED)") || strings.Contains(got, "Retry failed files") {
		t.Errorf("retried upload page: %q", got)
	}
	href := bt.Run(t, b, chromedp.Evaluate[string](`document.querySelector("[data-upload-poll] a[href^='/packages/']")?.getAttribute("href") ?? ""`))
	var id int64
	if _, err := fmt.Sscanf(href, "/packages/%d", &id); err != nil {
		t.Fatalf("the retried upload links no package (%q)", href)
	}
	p, err := w.db.FindPackageByID(ctx, id)
	if err != nil || p.FileName != "Watchtower.zip" || len(p.DestMessageIDs) != 1 ||
		!slices.Contains(w.env.Emu.Documents(w.env.Emu.DestinationID()), int(p.DestMessageIDs[0])) {
		t.Errorf("uploaded package: %+v, %v", p, err)
	}
	errs.Check(t, "retried upload")
}

// waitCyclesDone waits until no ingestion cycle is queued or running, so
// that the next repair's cycle is not absorbed by one that scanned already.
func (w *botWorld) waitCyclesDone(t *testing.T) {
	t.Helper()
	waitUntil(t, "the cycles to finish", 120*time.Second, func() bool {
		return w.unfinishedJobs(t, hoard.IngestCycleArgs{}.Kind(), hoard.DeleteStalePostsArgs{}.Kind()) == 0
	})
}

// uploadNamed matches the upload of a new document named name (not a
// re-sent one).
func uploadNamed(name string) func(bin.Object) bool {
	return func(req bin.Object) bool {
		r, ok := req.(*tg.MessagesSendMediaRequest)
		if !ok {
			return false
		}
		m, ok := r.Media.(*tg.InputMediaUploadedDocument)
		if !ok {
			return false
		}
		for _, a := range m.Attributes {
			if f, ok := a.(*tg.DocumentAttributeFilename); ok && f.FileName == name {
				return true
			}
		}
		return false
	}
}
