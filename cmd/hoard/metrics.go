package main

import (
	"context"
	"path/filepath"

	"github.com/hoard/hoard/metrics"
	"github.com/hoard/hoard/store"
)

// newMetrics builds this process's metrics: River's jobs read from the
// database and the spool measured at scrape time.
func (a *app) newMetrics() *metrics.Metrics {
	return metrics.New(metrics.Options{Version: version, CountJobs: countJobs(a.db), Logger: a.log,
		SpoolDir: filepath.Join(a.cfg.DataDir, "spool")})
}

// countJobs reads River's job counts for a scrape; PostgreSQL cancels the
// query past the scrape's time.
func countJobs(db *store.DB) metrics.CountJobsFunc {
	return func(ctx context.Context) ([]metrics.JobCount, error) {
		counts, err := db.CountJobsByKindAndState(store.WithStatementTimeout(ctx, metrics.ScrapeTimeout))
		if err != nil {
			return nil, err
		}
		out := make([]metrics.JobCount, len(counts))
		for i, c := range counts {
			out[i] = metrics.JobCount{Kind: c.Kind, State: c.State, Count: c.Count}
		}
		return out, nil
	}
}

// serveMetrics opens METRICS_ADDR, when set, and serves /metrics there
// until stop is called or ctx ends; stop waits for the listener to close.
// ready, when not nil, gets the listener's address. A listener that cannot
// open fails the start.
func (a *app) serveMetrics(ctx context.Context, ready func(addr string)) (stop func(), err error) {
	if a.cfg.MetricsAddr == "" {
		return func() {}, nil
	}
	ln, err := a.metrics.Listen(a.cfg.MetricsAddr)
	if err != nil {
		return nil, err
	}
	a.log.Info("metrics listening", "addr", ln.Addr().String(), "path", "/metrics")
	if ready != nil {
		ready(ln.Addr().String())
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := a.metrics.Serve(ctx, ln); err != nil {
			a.log.Error("metrics listener stopped", "err", err)
		}
	}()
	return func() { cancel(); <-done }, nil
}
