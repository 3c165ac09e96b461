package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// DeleteStalePostsWorker runs DeleteStalePostsArgs: the last step of a
// repair.
type DeleteStalePostsWorker struct {
	worker[hoard.DeleteStalePostsArgs]
	db       *store.DB
	log      *slog.Logger
	platform *platform
}

func newDeleteStalePostsWorker(p *parts) *DeleteStalePostsWorker {
	return &DeleteStalePostsWorker{worker: worker[hoard.DeleteStalePostsArgs]{fail: p.fail}, db: p.db, log: p.log, platform: p.platform}
}

// Work implements river.Worker. A package not published again (yet) keeps
// its stale posts: verify queues this job again when it is. A stale post
// that is one of the package's posts again is forgotten, never deleted.
// A destination that is gone or that no signed-in account writes to cancels
// the job (the posts stay recorded, so the audit never calls them orphans);
// a rate limit snoozes it; other failures are retried (its policy).
func (w *DeleteStalePostsWorker) Work(ctx context.Context, job *river.Job[hoard.DeleteStalePostsArgs]) error {
	return w.finish(ctx, job, w.work(ctx, job), nil)
}

func (w *DeleteStalePostsWorker) work(ctx context.Context, job *river.Job[hoard.DeleteStalePostsArgs]) error {
	db := w.db
	p, err := db.FindPackageByID(ctx, job.Args.PackageID)
	if err != nil {
		return lookup(fmt.Errorf("delete stale posts: %w", err)) // gone: its stale posts went with it
	}
	if p.DestChannelID == 0 || len(p.DestMessageIDs) == 0 {
		return nil
	}
	stale, err := db.ListStalePosts(ctx, p.ID)
	if err != nil {
		return fmt.Errorf("delete stale posts: %w", err)
	}
	var current, old []store.StalePost
	byChannel := map[int64][]int{}
	for _, s := range stale {
		if s.DestChannelID == p.DestChannelID && slices.Contains(p.DestMessageIDs, s.MessageID) {
			current = append(current, s)
			continue
		}
		old = append(old, s)
		byChannel[s.DestChannelID] = append(byChannel[s.DestChannelID], int(s.MessageID))
	}
	if err := db.ForgetStalePosts(ctx, p.ID, current); err != nil {
		return err
	}
	for channelID, ids := range byChannel {
		rd, err := w.platform.destinationReader(ctx, channelID)
		if err != nil {
			return fmt.Errorf("delete stale posts of %s: %w", p.FileName, err)
		}
		if err := rd.account.DeleteMessages(ctx, rd.peer, ids); err != nil {
			return fmt.Errorf("delete stale posts of %s: %w", p.FileName, err)
		}
	}
	if err := db.ForgetStalePosts(ctx, p.ID, old); err != nil {
		return err
	}
	if len(old) > 0 {
		w.log.Info("stale posts of a repaired package deleted", "package", p.ID, "file", p.FileName, "posts", len(old))
	}
	return nil
}
