package jobs

import (
	"context"
	"fmt"
	"slices"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// DeleteStalePostsWorker runs DeleteStalePostsArgs: the last step of a
// repair.
type DeleteStalePostsWorker struct {
	river.WorkerDefaults[hoard.DeleteStalePostsArgs]
	deps Deps
}

// Work implements river.Worker. A package not published again (yet) keeps
// its stale posts: verify queues this job again when it is. A stale post
// that is one of the package's posts again is forgotten, never deleted.
// A destination that is gone or that no signed-in account writes to cancels
// the job (the posts stay recorded, so the audit never calls them orphans);
// a rate limit snoozes it; other failures are retried.
func (w *DeleteStalePostsWorker) Work(ctx context.Context, job *river.Job[hoard.DeleteStalePostsArgs]) error {
	d, db := &w.deps, w.deps.DB
	p, err := db.FindPackageByID(ctx, job.Args.PackageID)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return river.JobCancel(err) // its stale posts went with it
	}
	if err != nil {
		return fmt.Errorf("delete stale posts: %w", err)
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
		rd, err := d.destinationReader(ctx, channelID)
		if hoard.ErrorCode(err) == hoard.EINVALID {
			return river.JobCancel(fmt.Errorf("delete stale posts of %s: %w", p.FileName, err))
		}
		if err != nil {
			return fmt.Errorf("delete stale posts of %s: %w", p.FileName, err)
		}
		if err := rd.account.DeleteMessages(ctx, rd.peer, ids); err != nil {
			if serr, limited := snoozeIfLimited(err); limited {
				return serr
			}
			return fmt.Errorf("delete stale posts of %s: %w", p.FileName, err)
		}
	}
	if err := db.ForgetStalePosts(ctx, p.ID, old); err != nil {
		return err
	}
	if len(old) > 0 {
		d.Logger.Info("stale posts of a repaired package deleted", "package", p.ID, "file", p.FileName, "posts", len(old))
	}
	return nil
}
