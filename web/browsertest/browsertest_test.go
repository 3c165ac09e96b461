package browsertest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestCollectErrors: an uncaught exception, a rejected promise, a
// console.error and an image that is not there are all collected; a clean
// page collects nothing.
func TestCollectErrors(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/favicon.ico", http.NotFound)
	mux.HandleFunc("/clean", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`<!doctype html><link rel="icon" href="data:,"><p id="ok">fine</p><script>console.log("just a log")</script>`))
	})
	mux.HandleFunc("/broken", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`<!doctype html><link rel="icon" href="data:,"><p id="ok">broken</p><img src="/missing.png">
<script>console.error("it went", "wrong"); Promise.reject(new Error("rejected")); setTimeout(() => { throw new Error("thrown") });</script>`))
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	ctx := New(t)
	errs := CollectErrors(t, ctx)

	Do(t, ctx, chromedp.Navigate(ts.URL+"/clean"), chromedp.WaitVisible(chromedp.CSS(`#ok`)))
	if got := errs.Take(); len(got) != 0 {
		t.Errorf("clean page: %q", got)
	}
	Do(t, ctx, chromedp.Navigate(ts.URL+"/broken"), chromedp.WaitVisible(chromedp.CSS(`#ok`)))
	want := []string{"console.error: it went wrong", "rejected", "thrown", "404"}
	var got []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got = append(got, errs.Take()...)
		all := strings.Join(got, "\n")
		missing := slices.DeleteFunc(slices.Clone(want), func(w string) bool { return strings.Contains(all, w) })
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("collected %q: nothing with %q", got, missing)
		}
	}
	if len(got) != len(want) {
		t.Errorf("collected %d errors, want %d: %q", len(got), len(want), got)
	}
}
