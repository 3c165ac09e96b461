package web

import (
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// ingestingNote is what the catalog says while an ingestion cycle runs:
// in a fresh install (the demo's first minute) the catalog fills while its
// reader watches, and the page says why it is still short.
type ingestingNote struct {
	Since    time.Time // the cycle's start
	Ingested int       // packages it indexed so far
	Trigger  hoard.RunTrigger
}

// catalogIngesting returns the running ingestion cycle for the first page of
// the plain catalog (no search, no filter, the All tab), nil otherwise or
// when none runs.
func (s *Server) catalogIngesting(r *http.Request, q catalogQuery) (*ingestingNote, error) {
	if !plainFirstPage(q) {
		return nil, nil
	}
	return s.runningCycle(r)
}

// plainFirstPage reports whether q is the plain catalog's first page: no
// search, no filter, no page after the first.
func plainFirstPage(q catalogQuery) bool {
	return q.Text == "" && q.Creator == "" && len(q.Tags) == 0 && q.ChannelID == 0 && q.Kind == "" && q.HasPreview == nil &&
		q.Grouped == nil && q.Cursor == ""
}

// cycleRunning reports whether an ingestion cycle runs (runningCycle).
func (s *Server) cycleRunning(r *http.Request) (bool, error) {
	note, err := s.runningCycle(r)
	return note != nil, err
}

// runningCycle returns the running ingestion cycle, nil when none runs,
// looked up at most every ingestingTTL.
func (s *Server) runningCycle(r *http.Request) (*ingestingNote, error) {
	s.ingestingMu.Lock()
	defer s.ingestingMu.Unlock()
	if time.Since(s.ingestingAt) < ingestingTTL {
		return s.ingesting, nil
	}
	run, err := s.deps.DB.FindRunningRun(r.Context())
	switch {
	case hoard.ErrorCode(err) == hoard.ENOTFOUND:
		s.ingesting = nil
	case err != nil:
		return nil, err
	default:
		s.ingesting = &ingestingNote{Since: run.StartedAt, Ingested: run.Ingested, Trigger: run.Trigger}
	}
	s.ingestingAt = time.Now()
	return s.ingesting, nil
}

// ingestingTTL bounds how stale the catalog's note of a running cycle may
// be: the plain catalog is the most visited page, and the note needs no
// more than a glance at the runs every few seconds (its script polls every
// 5 s).
const ingestingTTL = 2 * time.Second

// agoText says how long before now t was, as people say it: "just now",
// "40 s ago", "3 min ago", "2 h ago", "5 days ago"; a moment in the future
// (a clock ahead of the database's) is "just now".
func agoText(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 5*time.Second:
		return "just now"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + " s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + " h ago"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + " days ago"
}

// agoHTML is agoText in a <time> element carrying the moment (RFC 3339,
// UTC) for the page's script and, as its title, the moment in UTC.
func agoHTML(t, now time.Time) template.HTML {
	u := t.UTC()
	return template.HTML(`<time datetime="` + u.Format(time.RFC3339) + `" title="` + u.Format("2006-01-02 15:04") + ` UTC" data-ago>` +
		agoText(t, now) + `</time>`) // #nosec G203 -- digits and fixed words only
}

// newPackagesParams are the query of GET /api/packages/new.
type newPackagesParams struct {
	Since int64 `form:"since" validate:"gte=0"`
}

// handleNewPackages answers GET /api/packages/new?since=ID, which an open
// catalog page polls: {"newest_id", "new" (packages with an id above since,
// at most store.NewPackagesMax), "capped", "running" (an ingestion cycle
// runs: the page looks again sooner)}. It costs two primary-key probes and
// the cached look at the runs the catalog's note uses.
func (s *Server) handleNewPackages(w http.ResponseWriter, r *http.Request) error {
	in := paramsOf[newPackagesParams](r)
	newest, count, err := s.deps.DB.NewPackagesSince(r.Context(), in.Since)
	if err != nil {
		return err
	}
	running, err := s.cycleRunning(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"newest_id": newest, "new": count, "capped": count >= store.NewPackagesMax, "running": running})
	return nil
}
