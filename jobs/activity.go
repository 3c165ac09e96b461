package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// progress records what the jobs are doing for the worker panel: a run's
// live activity and the files in flight. A failure to record is logged at
// debug level, never returned.
type progress struct {
	db  *store.DB
	log *slog.Logger
	// observeFile, when set (tests), is told every phase a file in flight
	// enters, as it is recorded.
	observeFile func(hoard.FileProgress)
}

// run returns the activity of run runID (nothing recorded when 0).
func (p *progress) run(runID int64) *activity {
	return &activity{p: p, runID: runID}
}

// activity writes a run's live activity at most every 2 s (and always for
// a new step), so progress callbacks cost no more than that.
type activity struct {
	p     *progress
	runID int64
	mu    sync.Mutex
	last  time.Time
	step  string
}

func (a *activity) set(ctx context.Context, act hoard.RunActivity) {
	if a == nil || a.runID == 0 {
		return
	}
	a.mu.Lock()
	now := time.Now()
	if act.Step == a.step && now.Sub(a.last) < 2*time.Second {
		a.mu.Unlock()
		return
	}
	a.last, a.step = now, act.Step
	a.mu.Unlock()
	if err := a.p.db.SetRunActivity(ctx, a.runID, act); err != nil {
		a.p.log.Debug("set run activity", "run", a.runID, "err", err)
	}
}

// fileProgressEvery is how often a phase's progress is written at most; a
// new phase or part is written at once.
const fileProgressEvery = time.Second

// fileTracker records the phases of the file a job moves (the worker
// panel's list of files in flight) in the job's River metadata
// (store.SetJobFileProgress), so that the panel shows what the code is
// doing now: each phase is recorded where the code enters it. A failure to
// record is logged, never returned. A nil tracker records nothing.
type fileTracker struct {
	p     *progress
	jobID int64
	mu    sync.Mutex
	cur   hoard.FileProgress
	last  time.Time
}

// file returns the tracker of job's file: run, source message and name
// say which file it is.
func (p *progress) file(jobID, runID, channelID, messageID int64, file string) *fileTracker {
	return &fileTracker{p: p, jobID: jobID,
		cur: hoard.FileProgress{RunID: runID, ChannelID: channelID, MessageID: messageID, File: file}}
}

// phase records that the file enters phase (part of parts for a part's
// upload; 0 otherwise) with total bytes to move (0: no measure).
func (f *fileTracker) phase(ctx context.Context, phase hoard.FilePhase, part, parts int, total int64) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.cur.Phase, f.cur.Part, f.cur.Parts, f.cur.Bytes, f.cur.TotalBytes = phase, part, parts, 0, total
	p := f.cur
	f.last = time.Now()
	f.mu.Unlock()
	f.write(ctx, p)
	if f.p.observeFile != nil {
		f.p.observeFile(p)
	}
}

// progress records bytes done of the current phase, at most every
// fileProgressEvery (and always the last byte).
func (f *fileTracker) progress(ctx context.Context, done int64) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.cur.Bytes = done
	now := time.Now()
	if now.Sub(f.last) < fileProgressEvery && done != f.cur.TotalBytes {
		f.mu.Unlock()
		return
	}
	f.last = now
	p := f.cur
	f.mu.Unlock()
	f.write(ctx, p)
}

func (f *fileTracker) write(ctx context.Context, p hoard.FileProgress) {
	if f.jobID == 0 {
		return
	}
	if err := f.p.db.SetJobFileProgress(context.WithoutCancel(ctx), f.jobID, p); err != nil {
		f.p.log.Debug("set file progress", "job", f.jobID, "file", p.File, "err", err)
	}
}

// progressWriter tells a tracker the bytes written through it.
type progressWriter struct {
	ctx  context.Context
	f    *fileTracker
	done int64
}

func (c *progressWriter) Write(p []byte) (int, error) {
	c.done += int64(len(p))
	c.f.progress(c.ctx, c.done)
	return len(p), nil
}
