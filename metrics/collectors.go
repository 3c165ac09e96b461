package metrics

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"
)

// JobCount is how many River jobs of one kind are in one of River's states.
type JobCount struct {
	Kind  string
	State string // River's state: available, pending, scheduled, running, retryable, discarded, …
	Count int64
}

// CountJobsFunc reads River's job counts by kind and state: one grouped
// query that must honour ctx's deadline.
type CountJobsFunc func(ctx context.Context) ([]JobCount, error)

// Job states of hoard_river_jobs. River's available and pending jobs are
// queued; its completed and cancelled ones are history and not reported.
const (
	StateQueued    = "queued"
	StateScheduled = "scheduled"
	StateRunning   = "running"
	StateRetryable = "retryable"
	StateDiscarded = "discarded"
)

// jobStates are the states every reported kind has a series for.
var jobStates = []string{StateQueued, StateScheduled, StateRunning, StateRetryable, StateDiscarded}

// reportedState maps River's state names onto jobStates ("" : not
// reported).
func reportedState(riverState string) string {
	switch riverState {
	case "available", "pending":
		return StateQueued
	case "scheduled", "running", "retryable", "discarded":
		return riverState
	}
	return ""
}

var jobsDesc = prometheus.NewDesc(namespace+"_river_jobs",
	"River jobs by kind and state (queued, scheduled, running, retryable, discarded), read from the database at scrape time.",
	[]string{"kind", "state"}, nil)

// successDesc is the hoard_metrics_collector_success series of one
// scrape-time collector: 1 when it read its values, 0 when it failed (its
// series are then missing or a lower bound).
func successDesc(collector string) *prometheus.Desc {
	return prometheus.NewDesc(namespace+"_metrics_collector_success",
		"Whether a collector that reads its values at scrape time read them in this scrape (1) or failed (0).",
		nil, prometheus.Labels{"collector": collector})
}

// success reports the outcome of one collector's scrape.
func success(ch chan<- prometheus.Metric, desc *prometheus.Desc, err error) {
	v := 1.0
	if err != nil {
		v = 0
	}
	ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v)
}

// jobsCollector reports River's jobs by kind and state with one grouped
// query per scrape, bounded by ScrapeTimeout. A kind with any job has a
// series for every state, zero included.
type jobsCollector struct {
	count  CountJobsFunc
	log    *slog.Logger
	okDesc *prometheus.Desc
}

func newJobsCollector(count CountJobsFunc, log *slog.Logger) *jobsCollector {
	return &jobsCollector{count: count, log: log, okDesc: successDesc("river_jobs")}
}

// Describe implements prometheus.Collector.
func (c *jobsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- jobsDesc
	ch <- c.okDesc
}

// Collect implements prometheus.Collector.
func (c *jobsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), ScrapeTimeout)
	defer cancel()
	counts, err := c.count(ctx)
	success(ch, c.okDesc, err)
	if err != nil {
		c.log.Warn("metrics: count river jobs", "err", err)
		return
	}
	byKind := map[string]map[string]int64{}
	for _, jc := range counts {
		state := reportedState(jc.State)
		if state == "" {
			continue
		}
		if byKind[jc.Kind] == nil {
			byKind[jc.Kind] = map[string]int64{}
		}
		byKind[jc.Kind][state] += jc.Count
	}
	for kind, states := range byKind {
		for _, s := range jobStates {
			ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(states[s]), kind, s)
		}
	}
}

// MaxSpoolEntries bounds the files and directories one scrape looks at in
// the spool; past it the figures are a lower bound and the collector
// reports failure.
const MaxSpoolEntries = 100_000

var (
	spoolBytesDesc = prometheus.NewDesc(namespace+"_spool_bytes",
		"Disk the spool of downloads in flight uses (allocated blocks), measured at scrape time.", nil, nil)
	spoolFilesDesc = prometheus.NewDesc(namespace+"_spool_files",
		"Files in the spool of downloads in flight, counted at scrape time.", nil, nil)
)

// errSpoolTooBig stops a spool walk at MaxSpoolEntries.
var errSpoolTooBig = fmt.Errorf("more than %d entries: figures are a lower bound", MaxSpoolEntries)

// spoolCollector measures the spool directory at scrape time.
type spoolCollector struct {
	dir    string
	limit  int // entries one walk looks at
	log    *slog.Logger
	okDesc *prometheus.Desc
}

func newSpoolCollector(dir string, log *slog.Logger) *spoolCollector {
	return &spoolCollector{dir: dir, limit: MaxSpoolEntries, log: log, okDesc: successDesc("spool")}
}

// Describe implements prometheus.Collector.
func (c *spoolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- spoolBytesDesc
	ch <- spoolFilesDesc
	ch <- c.okDesc
}

// Collect implements prometheus.Collector.
func (c *spoolCollector) Collect(ch chan<- prometheus.Metric) {
	bytes, files, err := spoolUsage(c.dir, c.limit)
	success(ch, c.okDesc, err)
	if err != nil {
		c.log.Warn("metrics: measure the spool", "dir", c.dir, "err", err)
	}
	ch <- prometheus.MustNewConstMetric(spoolBytesDesc, prometheus.GaugeValue, float64(bytes))
	ch <- prometheus.MustNewConstMetric(spoolFilesDesc, prometheus.GaugeValue, float64(files))
}

// spoolUsage adds up the disk the regular files under dir use, looking at
// no more than limit entries. A missing dir is an empty spool; files that
// vanish during the walk (a download finished) are passed over.
func spoolUsage(dir string, limit int) (bytes, files int64, err error) {
	seen := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if seen++; seen > limit {
			return errSpoolTooBig
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		files++
		bytes += allocated(info)
		return nil
	})
	return bytes, files, err
}
