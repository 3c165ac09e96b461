package demo

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

// OnceSummary is what `hoard demo --once` prints (as JSON): the run and
// what the catalog holds afterwards.
type OnceSummary struct {
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

// once runs one ingestion cycle with the worker (no schedule, quick
// retries), waits until it and the grouping it queued are done, stops the
// worker, prints a JSON summary and reports success when the run
// COMPLETED. With METRICS_ADDR it serves /metrics meanwhile (the address
// printed first), and with linger it goes on serving them after the
// summary, final by then, until interrupted.
func once(ctx context.Context, svc *Service, s Settings, m *Messenger, linger bool, stdout, stderr io.Writer) int {
	stopMetrics, err := svc.ServeMetrics(ctx, func(addr string) { fmt.Fprintf(stdout, "Metrics: http://%s/metrics\n", addr) })
	if err != nil {
		fmt.Fprintf(stderr, "hoard demo --once: %v\n", err)
		return exitFailure
	}
	defer stopMetrics()
	code := runOnce(ctx, svc, s, m, stdout, stderr)
	if linger && svc.Config.MetricsAddr != "" {
		fmt.Fprintln(stderr, "hoard demo --once: the final metrics stay served until interrupted")
		<-ctx.Done()
	}
	return code
}

// runOnce is once's cycle and summary.
func runOnce(parent context.Context, svc *Service, s Settings, m *Messenger, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(parent, onceTimeout)
	defer cancel()
	s.NoSchedule = true
	if s.RetryBase == 0 {
		s.RetryBase = time.Second
	}
	if s.LaterRetry == 0 {
		s.LaterRetry = 2 * time.Second // one run, no later cycles: every attempt within it
	}
	s.FetchCooldown, s.FetchPoll = 20*time.Millisecond, 200*time.Millisecond
	client, err := svc.StartWorker(ctx, s)
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
	requests := m.limiter.Waits()
	res, err := client.Insert(ctx, hoard.IngestCycleArgs{Trigger: hoard.TriggerDemo}, nil)
	if err != nil {
		fmt.Fprintf(stderr, "hoard demo --once: queue the cycle: %v\n", err)
		return exitFailure
	}
	run, err := waitForRun(ctx, svc, res.Job.ID)
	if err != nil {
		fmt.Fprintf(stderr, "hoard demo --once: the cycle did not finish: %v\n", err)
		return exitFailure
	}
	// Every job has returned once the worker stops: what they told the
	// metrics is in, and the counts below are final.
	stopWorker()
	sum, err := summarize(ctx, svc, run, m.limiter.Waits()-requests, m.limiter.Waits())
	if err != nil {
		fmt.Fprintf(stderr, "hoard demo --once: %v\n", err)
		return exitFailure
	}
	out, _ := json.Marshal(sum)
	fmt.Fprintln(stdout, string(out))
	if run.Status != hoard.RunCompleted {
		return exitFailure
	}
	return exitOK
}

// waitForRun waits until the run of the cycle job is final and the
// grouping it queued has run too.
func waitForRun(ctx context.Context, svc *Service, jobID int64) (*hoard.IngestionRun, error) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
		r, err := svc.DB.FindRunByJob(ctx, jobID)
		if err != nil || r.Status == hoard.RunRunning {
			continue
		}
		n, err := svc.DB.CountUnfinishedJobs(ctx, hoard.GroupChannelArgs{}.Kind(), hoard.LearnGroupRuleArgs{}.Kind())
		if err != nil || n > 0 {
			continue
		}
		return r, nil
	}
}

// summarize is the summary of a final run: its counts and the catalog's.
func summarize(ctx context.Context, svc *Service, run *hoard.IngestionRun, requests, requestsAll int64) (OnceSummary, error) {
	sum := OnceSummary{RunID: run.ID, RunStatus: string(run.Status), RunError: run.ErrorMessage,
		Scanned: run.MessagesScanned, ArchivesFound: run.ArchivesFound, Duplicates: run.Duplicates,
		Ingested: run.Ingested, SkippedInRun: run.Skipped, HeldBack: run.HeldBack,
		PlatformRequests: requests, PlatformRequestsAll: requestsAll, SpoolReadBytes: archive.FilesBytesRead()}
	for _, c := range []struct {
		dst   *int64
		table string
	}{{&sum.Packages, "packages"}, {&sum.Groups, "package_groups"}, {&sum.Skipped, "skipped_packages"},
		{&sum.Notifications, "system_notifications"}} {
		var err error
		if *c.dst, err = svc.DB.CountRows(ctx, c.table); err != nil {
			return sum, fmt.Errorf("summary: %w", err)
		}
	}
	return sum, nil
}
