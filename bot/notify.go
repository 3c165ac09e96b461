package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// Folding of notices: the notifier waits until no new package arrived for
// notifyQuiet, but never longer than notifyMaxDelay after the oldest, so
// packages indexed in one burst (a cycle's) become one digest per user.
const (
	notifyQuiet    = 3 * time.Second
	notifyMaxDelay = time.Minute
	// digestsPerPass bounds how many digests one query reads.
	digestsPerPass = 50
)

// NotifyWorker works notify_subscribers: once the burst of new packages
// has settled, it makes the notices (store.CollectNotices: at most one per
// subscription and package, ever, one digest per user) and sends every
// digest not sent yet, each with a random id derived from the digest, so a
// retry never sends one twice. A user who blocked the bot has the digest
// dropped and their subscriptions paused.
type NotifyWorker struct {
	river.WorkerDefaults[hoard.NotifySubscribersArgs]
	deps Deps
}

// Work implements river.Worker.
func (w *NotifyWorker) Work(ctx context.Context, job *river.Job[hoard.NotifySubscribersArgs]) error {
	db := w.deps.DB
	in, err := db.FindNotifyInbox(ctx)
	if err != nil {
		return err
	}
	if in.Packages > 0 {
		if wait := settleWait(in); wait > 0 {
			return river.JobSnooze(wait)
		}
		if _, err := db.CollectNotices(ctx); err != nil {
			return err
		}
	}
	for {
		digests, err := db.ListUnsentDigests(ctx, digestsPerPass)
		if err != nil {
			return err
		}
		for _, d := range digests {
			if err := w.send(ctx, d); err != nil {
				if fw, ok := messenger.AsFloodWait(err); ok {
					return river.JobSnooze(fw.RetryAfter + time.Second)
				}
				return err
			}
		}
		if len(digests) < digestsPerPass {
			return nil
		}
	}
}

// settleWait is how long to wait for a burst of new packages to end.
func settleWait(in store.NotifyInbox) time.Duration {
	if in.SinceNewest >= notifyQuiet || in.SinceOldest >= notifyMaxDelay {
		return 0
	}
	return min(notifyQuiet-in.SinceNewest, notifyMaxDelay-in.SinceOldest)
}

// send sends one digest to the account linked now, if it is still the
// one the digest was made for.
func (w *NotifyWorker) send(ctx context.Context, d store.NoticeDigest) error {
	db := w.deps.DB
	if ok, err := db.IsLinkedTo(ctx, d.UserID, d.PlatformUserID); err != nil {
		return err
	} else if !ok {
		return db.FinishDigest(ctx, d.ID, "unlinked")
	}
	msg := digestMessage(d)
	msg.RandomID = messenger.DeriveRandomID(ridDigest, d.ID)
	_, err := w.deps.Bot.Send(ctx, d.PlatformUserID, msg)
	switch {
	case err == nil, errors.Is(err, messenger.ErrDuplicate):
		return db.FinishDigest(ctx, d.ID, "")
	case errors.Is(err, messenger.ErrBlocked):
		if err := db.PauseSubscriptions(ctx, d.UserID); err != nil {
			return err
		}
		return db.FinishDigest(ctx, d.ID, "blocked")
	}
	return fmt.Errorf("send notice digest %d: %w", d.ID, err)
}

// digestMessage announces the packages of a digest: one in detail with a
// Send button, several as a list.
func digestMessage(d store.NoticeDigest) messenger.OutgoingMessage {
	var patterns []string
	for _, p := range d.Packages {
		for _, pat := range p.Patterns {
			if !slices.Contains(patterns, pat) {
				patterns = append(patterns, pat)
			}
		}
	}
	quoted := make([]string, len(patterns))
	for i, p := range patterns {
		quoted[i] = "“" + text(p) + "”"
	}
	matched := cutText(strings.Join(quoted, ", "), 600)
	if len(d.Packages) == 1 {
		p := d.Packages[0]
		line := "📦 <b>" + text(cutText(p.FileName, 300)) + "</b>"
		if p.Creator != "" {
			line += " by " + text(cutText(p.Creator, 100))
		}
		return messenger.OutgoingMessage{
			HTML:     fmt.Sprintf("🔔 <b>New package</b> for %s:\n%s · %s\n/package %d", matched, line, size(p.FileSize), p.ID),
			Keyboard: messenger.Keyboard{{{Text: "📥 Send it to me", Data: idData(dataSend, p.ID)}}},
		}
	}
	lines := make([]string, len(d.Packages))
	for i, p := range d.Packages {
		lines[i] = fmt.Sprintf("• <b>%s</b> · %s — /package %d", text(cutText(p.FileName, 120)), size(p.FileSize), p.ID)
	}
	head := fmt.Sprintf("🔔 <b>%d new packages</b> match your subscriptions (%s):\n", len(d.Packages), matched)
	return messenger.OutgoingMessage{HTML: fitLines(head, lines, "", messenger.MaxMessageText)}
}
