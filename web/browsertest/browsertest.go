// Package browsertest drives a headless chromium for the browser tests of
// web and cmd/hoard: it finds the browser, starts one per test, saves a
// screenshot of the page when the test fails, and collects the page's
// JavaScript exceptions and console errors so a test can assert there were
// none.
//
// Without chromium the tests fail under CI (CI set, where .ci/run installs
// it) and are skipped elsewhere.
package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Timeout bounds one browser's whole life in a test.
const Timeout = 3 * time.Minute

// ChromiumPath returns the chromium to drive: HOARD_CHROMIUM when set, else
// Debian's /usr/bin/chromium or /usr/bin/chromium-browser. Without one it
// fails the test under CI and skips it elsewhere.
func ChromiumPath(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("HOARD_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed: the browser tests need it (apt-get install chromium)")
	}
	t.Skip("chromium is not installed (apt-get install chromium); browser tests skipped outside CI")
	return ""
}

// New starts a headless chromium for one test and returns a chromedp
// context on its first tab, bounded by Timeout. Confirmation dialogs are
// accepted and prompts dismissed. When the test fails, the page is saved
// as a screenshot under os.TempDir and its path logged; the browser stops
// at cleanup.
func New(t testing.TB) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(ChromiumPath(t)), chromedp.NoSandbox,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, Timeout)
	t.Cleanup(func() {
		if t.Failed() {
			sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			if shot, err := chromedp.Run(sctx, chromedp.FullScreenshot(100)); err == nil {
				path := filepath.Join(os.TempDir(), fmt.Sprintf("hoard-%s-%d.png", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().Unix()))
				if os.WriteFile(path, shot, 0o644) == nil {
					t.Logf("screenshot of the failing page: %s", path)
				}
			}
		}
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})
	if _, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{
		Source: "window.confirm = () => true; window.prompt = () => null;"}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// Do runs browser steps and fails the test, naming the page it was on,
// when one fails.
func Do(t testing.TB, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		t.Fatalf("browser step failed at %s: %v", loc, err)
	}
}

// Follow runs steps that make the page navigate (a click on a link, a form
// submitted), waits up to 30 s until the new page has loaded and fails the
// test unless its document answered 2xx. Waiting for the load matters: the
// old page may match the selectors the next step checks the new one for.
func Follow(t testing.TB, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := chromedp.RunResponse(fctx, steps...)
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	switch {
	case err != nil:
		t.Fatalf("browser step failed at %s: %v", loc, err)
	case resp.Status < 200 || resp.Status > 299:
		t.Fatalf("the page %s answered %d %s", loc, resp.Status, resp.StatusText)
	}
}

// Run runs one browser action that yields a value and fails the test when
// it fails.
func Run[T any](t testing.TB, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Text returns the visible text of the first element that matches the CSS
// selector sel, waiting for it to be there.
func Text(t testing.TB, ctx context.Context, sel string) string {
	t.Helper()
	return Run(t, ctx, chromedp.Text(chromedp.CSS(sel)))
}

// Eventually waits up to 10 s for cond, which the browser's last action
// makes true once its request completes, and fails the test otherwise.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within 10 s", what)
}

// Errors collects what went wrong in the pages of one tab: uncaught
// exceptions and unhandled promise rejections, console.error calls, and
// the browser's own error log (a resource that failed to load). It is safe
// for concurrent use: chromium's events arrive on chromedp's goroutine.
type Errors struct {
	mu   sync.Mutex
	msgs []string
}

// CollectErrors starts collecting the errors of the tab of ctx (a context
// from New) from now on. Events reach it before the command that caused
// them returns, so a check right after a step sees that step's errors.
func CollectErrors(t testing.TB, ctx context.Context) *Errors {
	t.Helper()
	e := &Errors{}
	if err := chromedp.Listen(ctx, e.observe); err != nil {
		t.Fatalf("listen to the page's console: %v", err)
	}
	return e
}

// observe records one event when it is an error; it runs on chromedp's
// reading goroutine and so only appends.
func (e *Errors) observe(ev any) {
	var msg string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		msg = "exception: " + exceptionText(ev.ExceptionDetails)
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError {
			return
		}
		var parts []string
		for _, a := range ev.Args {
			switch {
			case a.Value != nil:
				var str string
				if json.Unmarshal(a.Value, &str) != nil {
					str = string(a.Value)
				}
				parts = append(parts, str)
			case a.Description != "":
				parts = append(parts, a.Description)
			default:
				parts = append(parts, string(a.Type))
			}
		}
		msg = "console.error: " + strings.Join(parts, " ") + stackPlace(ev.StackTrace)
	case *log.EventEntryAdded:
		if ev.Entry == nil || ev.Entry.Level != log.EntryLevelError {
			return
		}
		msg = fmt.Sprintf("browser log (%s): %s", ev.Entry.Source, ev.Entry.Text)
		if ev.Entry.URL != "" {
			msg += " " + ev.Entry.URL
		}
	default:
		return
	}
	e.mu.Lock()
	e.msgs = append(e.msgs, msg)
	e.mu.Unlock()
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "unknown"
	}
	text := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		text += " " + d.Exception.Description
	}
	if d.URL != "" {
		text += fmt.Sprintf(" at %s:%d:%d", d.URL, d.LineNumber+1, d.ColumnNumber+1)
	}
	return text
}

func stackPlace(st *runtime.StackTrace) string {
	if st == nil || len(st.CallFrames) == 0 {
		return ""
	}
	f := st.CallFrames[0]
	return fmt.Sprintf(" at %s:%d:%d", f.URL, f.LineNumber+1, f.ColumnNumber+1)
}

// Take returns the errors collected since the last Take and forgets them.
func (e *Errors) Take() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	msgs := e.msgs
	e.msgs = nil
	return msgs
}

// Check fails the test (without stopping it) when errors were collected
// since the last Take or Check, naming where the test was; it forgets them.
// Errors that expected reports are not errors (RiverUIEvalProbe).
func (e *Errors) Check(t testing.TB, where string, expected ...func(msg string) bool) {
	t.Helper()
	msgs := slices.DeleteFunc(e.Take(), func(msg string) bool {
		return slices.ContainsFunc(expected, func(is func(string) bool) bool { return is(msg) })
	})
	if len(msgs) > 0 {
		t.Errorf("%s: the page reported errors:\n  %s", where, strings.Join(msgs, "\n  "))
	}
}

// RiverUIEvalProbe reports the River UI's one expected report: its schema
// library probes once whether it may compile code (Function("")), and
// hoard's content security policy refuses, as it should; the library works
// without. Chromium logs the refusal with an empty first sentence; a
// securitypolicyviolation listener sees "script-src blocked eval".
func RiverUIEvalProbe(msg string) bool {
	return strings.Contains(msg, "script-src blocked eval") ||
		(strings.Contains(msg, "/admin/river/assets/") &&
			strings.Contains(msg, "(security):  Note that 'script-src' was not explicitly set, so 'default-src' is used as a fallback."))
}
