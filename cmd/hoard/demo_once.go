package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/queue"
)

// onceTimeout bounds `hoard demo --once`.
const onceTimeout = 30 * time.Minute

// onceSummary is what `hoard demo --once` prints: the run and what the
// catalog holds afterwards.
type onceSummary struct {
	RunID         int64  `json:"run_id"`
	RunStatus     string `json:"run_status"`
	RunError      string `json:"run_error,omitempty"`
	Scanned       int    `json:"messages_scanned"`
	ArchivesFound int    `json:"archives_found"`
	Duplicates    int    `json:"duplicates"`
	Ingested      int    `json:"ingested"`
	SkippedInRun  int    `json:"skipped_in_run"`
	HeldBack      int    `json:"held_back"`
	Packages      int64  `json:"packages"`
	Groups        int64  `json:"groups"`
	Skipped       int64  `json:"skipped"`
	Notifications int64  `json:"notifications"`
	// PlatformRequests is how many requests the account made from queueing
	// the cycle until it and its grouping were done.
	PlatformRequests int64 `json:"platform_requests"`
	// PlatformRequestsAll is every request the account made in this
	// process, its sign-in and the channels' set-up included (what the
	// metrics count).
	PlatformRequestsAll int64 `json:"platform_requests_all"`
	// SpoolReadBytes is how many bytes the process read back from spooled
	// downloads (archive.FilesBytesRead).
	SpoolReadBytes int64 `json:"spool_read_bytes"`
}

// demoOnce runs one ingestion cycle with the worker (no schedule, quick
// retries), waits until it and the grouping it queued are done, stops the
// worker, prints a JSON summary and reports success when the run
// COMPLETED. With METRICS_ADDR it serves /metrics meanwhile (the address
// printed first), and with linger it goes on serving them after the
// summary, final by then, until interrupted.
func (a *app) demoOnce(ctx context.Context, dm *demoMessenger, linger bool, stdout, stderr io.Writer) int {
	stopMetrics, err := a.serveMetrics(ctx, func(addr string) { fmt.Fprintf(stdout, "Metrics: http://%s/metrics\n", addr) })
	if err != nil {
		fmt.Fprintf(stderr, "hoard demo --once: %v\n", err)
		return exitFailure
	}
	defer stopMetrics()
	code := a.runOnce(ctx, dm, stdout, stderr)
	if linger && a.cfg.MetricsAddr != "" {
		fmt.Fprintln(stderr, "hoard demo --once: the final metrics stay served until interrupted")
		<-ctx.Done()
	}
	return code
}

// runOnce is demoOnce's cycle and summary.
func (a *app) runOnce(parent context.Context, dm *demoMessenger, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(parent, onceTimeout)
	defer cancel()
	a.noSchedule = true
	if a.retryBase == 0 {
		a.retryBase = time.Second
	}
	if a.laterRetry == 0 {
		a.laterRetry = 2 * time.Second // one run, no later cycles: every attempt within it
	}
	a.fetchCooldown, a.fetchPoll = 20*time.Millisecond, 200*time.Millisecond
	client, err := a.startWorker(ctx, true, nil)
	if err != nil {
		fmt.Fprintf(stderr, "hoard demo --once: %v\n", err)
		return exitFailure
	}
	stopped := false
	stopWorker := func() {
		if !stopped {
			stopped = true
			stopCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), 45*time.Second)
			defer stop()
			_ = queue.Stop(stopCtx, client)
		}
	}
	defer stopWorker()
	requests := dm.limiter.Waits()
	res, err := client.Insert(ctx, hoard.IngestCycleArgs{Trigger: hoard.TriggerDemo}, nil)
	if err != nil {
		fmt.Fprintf(stderr, "hoard demo --once: queue the cycle: %v\n", err)
		return exitFailure
	}
	var run *hoard.IngestionRun
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintf(stderr, "hoard demo --once: the cycle did not finish: %v\n", ctx.Err())
			return exitFailure
		case <-tick.C:
		}
		r, err := a.db.FindRunByJob(ctx, res.Job.ID)
		if err != nil || r.Status == hoard.RunRunning {
			continue
		}
		// The cycle is final; let the grouping it queued run too.
		n, err := a.db.CountUnfinishedJobs(ctx, hoard.GroupChannelArgs{}.Kind(), hoard.LearnGroupRuleArgs{}.Kind())
		if err != nil || n > 0 {
			continue
		}
		run = r
		break
	}
	// Every job has returned once the worker stops: what they told the
	// metrics is in, and the counts below are final.
	stopWorker()
	sum := onceSummary{RunID: run.ID, RunStatus: string(run.Status), RunError: run.ErrorMessage,
		Scanned: run.MessagesScanned, ArchivesFound: run.ArchivesFound, Duplicates: run.Duplicates,
		Ingested: run.Ingested, SkippedInRun: run.Skipped, HeldBack: run.HeldBack,
		PlatformRequests: dm.limiter.Waits() - requests, PlatformRequestsAll: dm.limiter.Waits(),
		SpoolReadBytes: archive.FilesBytesRead()}
	for _, c := range []struct {
		dst   *int64
		table string
	}{{&sum.Packages, "packages"}, {&sum.Groups, "package_groups"}, {&sum.Skipped, "skipped_packages"},
		{&sum.Notifications, "system_notifications"}} {
		if *c.dst, err = a.db.CountRows(ctx, c.table); err != nil {
			fmt.Fprintf(stderr, "hoard demo --once: %v\n", err)
			return exitFailure
		}
	}
	out, _ := json.Marshal(sum)
	fmt.Fprintln(stdout, string(out))
	if run.Status != hoard.RunCompleted {
		return exitFailure
	}
	return exitOK
}
