package jobs

import (
	"context"
	"fmt"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// ScanTopicWorker runs ScanTopicArgs.
type ScanTopicWorker struct {
	worker[hoard.ScanTopicArgs]
	db      *store.DB
	scanner *scanner
}

func newScanTopicWorker(p *parts) *ScanTopicWorker {
	return &ScanTopicWorker{worker: worker[hoard.ScanTopicArgs]{fail: p.fail}, db: p.db, scanner: p.scanner}
}

// Work implements river.Worker: it scans one forum topic's history after
// its watermark. A map or topic that is gone cancels the job; a channel the
// account can no longer read is notified and ends it (its policy).
func (w *ScanTopicWorker) Work(ctx context.Context, job *river.Job[hoard.ScanTopicArgs]) error {
	src, err := w.scanner.resolve(ctx, job.Args.MapID)
	if err != nil {
		return w.finish(ctx, job, err, nil)
	}
	topic, err := w.db.FindTopic(ctx, src.m.ID, job.Args.TopicID)
	if err != nil {
		return w.finish(ctx, job, lookup(fmt.Errorf("scan topic: %w", err)), nil)
	}
	if !topic.FetchEnabled || !src.channel.IsActive {
		return nil
	}
	err = scanHistory(ctx, w.scanner, job, src, topicMark{mapID: src.m.ID, t: topic, newest: job.Args.TopMessageID}, job.Args.RunID)
	return w.finish(ctx, job, err, w.scanner.failing(src))
}
