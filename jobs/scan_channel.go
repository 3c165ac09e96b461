package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// Cold-channel backoff (SPEC rule 18). A channel or topic whose last scans
// found nothing is scanned less often: after backoffAfter empty scans in a
// row, only when backoffCycles(n) intervals have passed since its last
// scan. One that found archives or has retryable work pending is always
// scanned; so is everything in a cycle a user triggered.
const (
	backoffAfter     = 3
	backoffMaxCycles = 8
)

// shouldScan decides whether a scheduled cycle scans a channel or topic
// with scan state s; reason says why not.
func shouldScan(s hoard.ScanState, now time.Time, interval time.Duration, manual bool) (bool, string) {
	if manual || s.LastScanFoundArchives || s.LastScannedAt.IsZero() {
		return true, ""
	}
	since := now.Sub(s.LastScannedAt)
	if since < interval/2 {
		return false, "scanned recently and found nothing"
	}
	if s.ConsecutiveEmptyScans >= backoffAfter {
		cycles := min(s.ConsecutiveEmptyScans-backoffAfter+2, backoffMaxCycles)
		// 10 % slack: periodic cycles do not land on exact multiples.
		if since < time.Duration(cycles)*interval*9/10 {
			return false, fmt.Sprintf("idle for %d scans: scanned every %d cycles", s.ConsecutiveEmptyScans, cycles)
		}
	}
	return true, ""
}

// ScanChannelWorker runs ScanChannelArgs.
type ScanChannelWorker struct {
	worker[hoard.ScanChannelArgs]
	db       *store.DB
	log      *slog.Logger
	scanner  *scanner
	progress *progress
	notices  *notices
}

func newScanChannelWorker(p *parts) *ScanChannelWorker {
	return &ScanChannelWorker{worker: worker[hoard.ScanChannelArgs]{fail: p.fail}, db: p.db, log: p.log, scanner: p.scanner,
		progress: p.progress, notices: p.notices}
}

// Work implements river.Worker: it refreshes what the platform says of the
// channel, then scans a plain channel's history (when shouldScan lets it)
// or, for a forum, queues a scan_topic job per topic that needs one. A
// channel the account can no longer read is notified and ends the job (its
// policy).
func (w *ScanChannelWorker) Work(ctx context.Context, job *river.Job[hoard.ScanChannelArgs]) error {
	src, err := w.scanner.resolve(ctx, job.Args.MapID)
	if err != nil {
		return w.finish(ctx, job, err, nil)
	}
	return w.finish(ctx, job, w.scan(ctx, job, src), w.scanner.failing(src))
}

func (w *ScanChannelWorker) scan(ctx context.Context, job *river.Job[hoard.ScanChannelArgs], src *channelAccess) error {
	db := w.db
	if !src.channel.IsActive {
		return nil
	}
	run, err := db.FindRun(ctx, job.Args.RunID)
	if err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return fmt.Errorf("scan channel: find run %d: %w", job.Args.RunID, err) // transient: retried
	}
	manual := run != nil && run.Trigger != hoard.TriggerSchedule

	info, err := src.account.ChannelInfo(ctx, src.peer)
	if err != nil {
		return scanFailed(src, err)
	}
	if err := w.refreshChannel(ctx, src, info); err != nil {
		return err
	}
	w.notices.accessRestored(ctx, src.channel)

	if !src.channel.IsForum {
		if ok, why := shouldScan(src.m.ScanState, w.scanner.now(), w.scanner.interval, manual); !ok {
			w.log.Debug("channel scan skipped", "channel", src.channel.Title, "reason", why)
			return nil
		}
		return scanHistory(ctx, w.scanner, job, src, channelMark{m: src.m}, job.Args.RunID)
	}
	return w.queueTopicScans(ctx, job, src, manual)
}

// refreshChannel stores what changed of the channel on the platform
// (forum, protected, title) and the peer that follows from it, so that
// the scan reads the channel as it is now: one that became a forum is
// scanned by topics, one that became protected is not re-sent from.
func (w *ScanChannelWorker) refreshChannel(ctx context.Context, src *channelAccess, info messenger.Channel) error {
	if info.Forum == src.channel.IsForum && info.Protected == src.channel.IsProtected && info.Title == src.channel.Title {
		return nil
	}
	src.channel.IsForum, src.channel.IsProtected, src.channel.Title = info.Forum, info.Protected, info.Title
	if err := w.db.UpsertChannel(ctx, src.channel); err != nil {
		return fmt.Errorf("scan channel: update channel: %w", err)
	}
	src.peer = peerOf(src.channel, src.m)
	return nil
}

// queueTopicScans lists a forum's topics and, in the transaction that
// completes the job, queues a scan_topic job for each topic that needs one
// (topicsToScan). Listing fails as a scan does (scanFailed).
func (w *ScanChannelWorker) queueTopicScans(ctx context.Context, job *river.Job[hoard.ScanChannelArgs], src *channelAccess, manual bool) error {
	act := w.progress.run(job.Args.RunID)
	act.set(ctx, hoard.RunActivity{Activity: "Listing topics of " + src.channel.Title, Step: "scanning",
		ChannelID: src.channel.ID, AccountChannelMapID: src.m.ID})
	topics, err := src.account.Topics(ctx, src.peer)
	if err != nil {
		return scanFailed(src, err)
	}
	params, err := w.topicsToScan(ctx, src, topics, job.Args.RunID, manual)
	if err != nil {
		return err
	}
	return completeTx(ctx, w.db, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
		if len(params) == 0 {
			return nil
		}
		_, err := client.InsertManyTx(ctx, tx.Tx(), params)
		return err
	})
}

// topicsToScan records the forum's topics (new ones, and renamed ones
// under their new name) and returns the scan_topic jobs of those that
// need a scan: fetching enabled, something after the watermark
// (topicIdle) and, in a scheduled cycle, not cold (shouldScan).
func (w *ScanChannelWorker) topicsToScan(ctx context.Context, src *channelAccess, topics []messenger.Topic, runID int64, manual bool) ([]river.InsertManyParams, error) {
	known, err := w.db.ListTopics(ctx, src.m.ID)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]hoard.TopicProgress, len(known))
	for _, t := range known {
		byID[t.TopicID] = t
	}
	var params []river.InsertManyParams
	err = w.db.InTx(ctx, func(tx *store.DB) error {
		for _, t := range topics {
			p, seen := byID[int64(t.ID)]
			if !seen || p.TopicName != t.Title {
				got, err := tx.UpsertTopic(ctx, src.m.ID, int64(t.ID), t.Title, t.ID == messenger.GeneralTopicID)
				if err != nil {
					return err
				}
				p = *got
			}
			if !p.FetchEnabled {
				continue
			}
			if topicIdle(t, p) {
				continue
			}
			if ok, _ := shouldScan(p.ScanState, w.scanner.now(), w.scanner.interval, manual); !ok {
				continue
			}
			params = append(params, river.InsertManyParams{Args: hoard.ScanTopicArgs{RunID: runID, MapID: src.m.ID,
				TopicID: int64(t.ID), TopMessageID: int64(t.TopMessageID)}})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan channel: topics: %w", err)
	}
	return params, nil
}

// topicIdle reports a topic with nothing after its watermark: the topic
// list carries each topic's newest message, so an idle topic costs no
// history call at all. Whether the last scan found archives does not
// matter: what it found was queued and the watermark moved past it (a set
// held back keeps the watermark below it, so its topic is not idle).
func topicIdle(t messenger.Topic, p hoard.TopicProgress) bool {
	return t.TopMessageID != 0 && int64(t.TopMessageID) <= p.LastProcessedMessageID
}
