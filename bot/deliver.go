package bot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// What a user reads on a delivery that failed (the web's Bot Sends tab
// shows it).
const (
	msgBlocked = "The bot cannot write to your messenger account: open the bot and press Start " +
		"(or unblock it), then send again."
	msgUnlinked    = "The messenger account this was meant for is no longer the one linked to your hoard account."
	msgUnpublished = "The package is not published right now (it may be under repair): send it again later."
)

// errUnlinked stops a delivery whose target is no longer the user's link.
var errUnlinked = errors.New("the target is no longer the user's linked account")

// SendWorker works bot_send: it copies every part of each package of a
// request (or of a batch, in order, after the batch's header) to the
// user's linked account. Each part's random id derives from the request
// and the part's message, and the parts delivered are recorded on the
// request as they go, so a retried or resumed job delivers each part
// exactly once. Right before copying a package it checks that the target
// is still the user's linked account. A flood wait snoozes the job (no
// attempt spent); a user who blocked the bot fails the delivery and pauses
// their subscriptions; the last failed attempt marks what is left FAILED.
type SendWorker struct {
	river.WorkerDefaults[hoard.BotSendArgs]
	deps Deps
}

// Timeout implements river.Worker: a batch of a large group takes as long
// as the platform's pace allows.
func (w *SendWorker) Timeout(*river.Job[hoard.BotSendArgs]) time.Duration { return 2 * time.Hour }

// Work implements river.Worker.
func (w *SendWorker) Work(ctx context.Context, job *river.Job[hoard.BotSendArgs]) error {
	all, err := w.deps.DB.StartBotSends(ctx, job.Args.RequestID, job.Args.BatchID)
	if err != nil {
		return err
	}
	var pending []store.BotDelivery
	for _, d := range all {
		if !d.Request.Status.Final() {
			pending = append(pending, d)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	if job.Args.BatchID != 0 && all[0].Request.PartsSent == 0 && !all[0].Request.Status.Final() {
		if err := w.header(ctx, job.Args.BatchID, len(all)); err != nil {
			return w.failed(ctx, job, pending, err)
		}
	}
	for i := range pending {
		if err := w.deliver(ctx, &pending[i]); err != nil {
			return w.failed(ctx, job, pending[i:], err)
		}
	}
	return nil
}

// header sends a batch's header message, when it has a title.
func (w *SendWorker) header(ctx context.Context, batchID int64, packages int) error {
	b, err := w.deps.DB.FindBotSendBatch(ctx, batchID)
	if err != nil || b.Title == "" {
		return err
	}
	if ok, err := w.deps.DB.IsLinkedTo(ctx, b.UserID, b.PlatformUserID); err != nil {
		return err
	} else if !ok {
		return errUnlinked
	}
	_, err = w.deps.Bot.Send(ctx, b.PlatformUserID, messenger.OutgoingMessage{
		HTML:     fmt.Sprintf("📬 <b>%s</b>\n%s follow, in order.", text(cutText(b.Title, 500)), plural(packages, "package")),
		RandomID: messenger.DeriveRandomID(ridHeader, batchID),
	})
	if errors.Is(err, messenger.ErrDuplicate) {
		return nil
	}
	return err
}

// deliver copies the parts of one package that are not delivered yet.
func (w *SendWorker) deliver(ctx context.Context, d *store.BotDelivery) error {
	r := &d.Request
	db := w.deps.DB
	if d.DestChannelPlatformID == 0 || len(d.DestMessageIDs) == 0 {
		return w.finish(ctx, r.ID, hoard.SendFailed, msgUnpublished, DeliveryUnpublished)
	}
	if ok, err := db.IsLinkedTo(ctx, r.UserID, r.PlatformUserID); err != nil {
		return err
	} else if !ok {
		return errUnlinked
	}
	rest := d.DestMessageIDs[min(r.PartsSent, len(d.DestMessageIDs)):]
	msgIDs := make([]int, len(rest))
	randomIDs := make([]int64, len(rest))
	for i, id := range rest {
		msgIDs[i] = int(id)
		randomIDs[i] = messenger.DeriveRandomID(ridPart, r.ID, id)
	}
	n, err := w.deps.Bot.Copy(ctx, r.PlatformUserID, d.DestChannelPlatformID, msgIDs, randomIDs)
	r.PartsSent += n
	var skipped *messenger.NotForwardedError
	if errors.As(err, &skipped) {
		return w.missingParts(context.WithoutCancel(ctx), d, skipped.MsgIDs)
	}
	// What was delivered must be recorded even when ctx ended meanwhile.
	if err == nil {
		// Every part delivered: SENT records them all in one write.
		return w.finish(context.WithoutCancel(ctx), r.ID, hoard.SendSent, "", DeliverySent)
	}
	if n > 0 {
		// The copy's error decides what happens next (a flood wait, a
		// blocked user); a progress not recorded only means those parts
		// are copied again, with the same random ids, so none arrives twice.
		if perr := db.SetBotSendProgress(context.WithoutCancel(ctx), r.ID, r.PartsSent); perr != nil {
			w.deps.Logger.Warn("bot: record a delivery's progress", "request", r.ID, "err", perr)
		}
	}
	return fmt.Errorf("copy %s to %d: %w", d.FileName, r.PlatformUserID, err)
}

// finish records a request's final status and counts its outcome.
func (w *SendWorker) finish(ctx context.Context, requestID int64, status hoard.SendStatus, message, outcome string) error {
	if err := w.deps.DB.SetBotSendStatus(ctx, requestID, status, message); err != nil {
		return err
	}
	w.deps.Metrics.BotDelivery(outcome, 1)
	return nil
}

// failed decides what a delivery error means for the requests not
// delivered yet (rest): wait, fail them, or retry.
func (w *SendWorker) failed(ctx context.Context, job *river.Job[hoard.BotSendArgs], rest []store.BotDelivery, err error) error {
	ids := make([]int64, len(rest))
	for i, d := range rest {
		ids[i] = d.Request.ID
	}
	db, final := w.deps.DB, context.WithoutCancel(ctx)
	if fw, ok := messenger.AsFloodWait(err); ok {
		w.deps.Logger.Info("bot: delivery waits for the platform", "wait", fw.RetryAfter, "job", job.ID)
		return river.JobSnooze(fw.RetryAfter + time.Second)
	}
	var message, outcome string
	switch {
	case errors.Is(err, messenger.ErrBlocked):
		message, outcome = msgBlocked, DeliveryBlocked
		if perr := db.PauseSubscriptions(final, rest[0].Request.UserID); perr != nil {
			return perr
		}
	case errors.Is(err, errUnlinked):
		message, outcome = msgUnlinked, DeliveryUnlinked
	case ctx.Err() == nil && job.Attempt >= job.MaxAttempts:
		message, outcome = "The delivery failed: "+hoard.ErrorMessage(err), DeliveryFailed
	default:
		return err // retried; the progress is kept
	}
	n, ferr := db.FailBotSends(final, ids, message)
	if ferr != nil {
		return ferr
	}
	w.deps.Metrics.BotDelivery(outcome, int(n))
	w.deps.Logger.Warn("bot: delivery failed", "requests", ids, "err", err)
	if message == msgBlocked || message == msgUnlinked {
		return nil
	}
	return err
}
