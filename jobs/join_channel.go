package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// JoinChannelWorker works hoard.JoinChannelArgs: the request's account joins
// the channel (a channel that approves members ends as REQUEST_SENT), the
// channel becomes an active source with the account's READER map and the
// request's category, and the outcome lands on the request in the
// transaction that completes the job. Rate limits snooze; other transient
// failures are recorded on the request and retried, and the last one
// makes it FAILED (its policy; the request is the subject, joinSubject).
type JoinChannelWorker struct {
	worker[hoard.JoinChannelArgs]
	db       *store.DB
	platform *platform
}

func newJoinChannelWorker(p *parts) *JoinChannelWorker {
	return &JoinChannelWorker{worker: worker[hoard.JoinChannelArgs]{fail: p.fail}, db: p.db, platform: p.platform}
}

// Work implements river.Worker.
func (w *JoinChannelWorker) Work(ctx context.Context, job *river.Job[hoard.JoinChannelArgs]) error {
	j, err := w.db.FindChannelJoin(ctx, job.Args.JoinID)
	if err != nil {
		return w.finish(ctx, job, lookup(fmt.Errorf("join channel: request %d: %w", job.Args.JoinID, err)), nil)
	}
	if j.Status.Final() {
		return nil
	}
	return w.finish(ctx, job, w.join(ctx, job, j), &joinSubject{w: w, job: job, j: j})
}

// join joins the channel of request j: an outcome the platform gave
// (joined, request sent, no such channel, …) completes the job; an error
// is a failed attempt.
func (w *JoinChannelWorker) join(ctx context.Context, job *river.Job[hoard.JoinChannelArgs], j *hoard.ChannelJoin) error {
	db := w.db
	done := func(status hoard.JoinStatus, channelID int64, title, message string) error {
		return completeTx(ctx, db, job, func(tx *store.DB, _ *river.Client[pgx.Tx]) error {
			_, err := tx.FinishChannelJoin(ctx, j.ID, status, channelID, title, message)
			return err
		})
	}
	ref, err := messenger.ParseChannelRef(j.Ref)
	if err != nil {
		return done(hoard.JoinFailed, 0, "", hoard.ErrorMessage(err))
	}
	if j.AccountID == 0 {
		return done(hoard.JoinFailed, 0, "", "The account chosen for the join no longer exists.")
	}
	acc, err := w.platform.account(ctx, j.AccountID)
	if err != nil {
		if !rateLimited(err) && (errors.Is(err, messenger.ErrUnauthorized) || hoard.ErrorCode(err) == hoard.EINVALID) {
			return done(hoard.JoinFailed, 0, "", fmt.Sprintf("The account cannot reach the platform: %v", err))
		}
		return err
	}
	ch, status, err := acc.JoinChannel(ctx, ref)
	switch {
	case err == nil:
	case errors.Is(err, messenger.ErrNotFound):
		what := "No channel is called " + ref.String() + "."
		if ref.IsInvite() {
			what = "The invite link is invalid or has expired."
		}
		return done(hoard.JoinNotFound, 0, "", what)
	case errors.Is(err, messenger.ErrAccessLost):
		return done(hoard.JoinFailed, 0, "", "The channel is private, or the account is banned from it.")
	default:
		return err
	}
	if status == messenger.RequestSent {
		return done(hoard.JoinRequestSent, 0, ch.Title, "The channel approves new members: the request waits for its administrators.")
	}
	if ch.ID == 0 {
		return done(hoard.JoinFailed, 0, ch.Title, "The platform did not tell which channel was joined.")
	}
	note := ""
	if status == messenger.AlreadyMember {
		note = "The account was already a member."
	}
	return completeTx(ctx, db, job, func(tx *store.DB, client *river.Client[pgx.Tx]) error {
		row, isNew, kept, err := addSource(ctx, tx, j, ref, ch)
		if err != nil {
			var msg *sourceRefused
			if errors.As(err, &msg) {
				_, err = tx.FinishChannelJoin(ctx, j.ID, hoard.JoinFailed, row.ID, ch.Title, msg.message)
			}
			return err
		}
		if kept != "" {
			note = strings.TrimSpace(note + " " + kept)
		}
		if _, err = tx.FinishChannelJoin(ctx, j.ID, hoard.JoinJoined, row.ID, ch.Title, note); err != nil {
			return err
		}
		return scanSoon(ctx, tx, client, row.ID, isNew)
	})
}

// scanSoon has a joined channel scanned without waiting for the next
// scheduled cycle: a new channel through a rescan job, which waits for a
// running cycle to end (its scans may have passed the channel list); one
// hoard had already through a cycle, unless one is queued or running.
func scanSoon(ctx context.Context, tx *store.DB, client *river.Client[pgx.Tx], channelID int64, isNew bool) error {
	var args river.JobArgs = hoard.IngestCycleArgs{Trigger: hoard.TriggerManual}
	if isNew {
		args = hoard.RescanChannelArgs{ChannelID: channelID}
	}
	if _, err := client.InsertTx(ctx, tx.Tx(), args, nil); err != nil {
		return fmt.Errorf("join channel: queue its first scan: %w", err)
	}
	return nil
}

// joinSubject is a join request as the subject of its job's failures: a
// failed attempt's error is noted on it; the final one makes it FAILED in
// the transaction that completes the job.
type joinSubject struct {
	w   *JoinChannelWorker
	job *river.Job[hoard.JoinChannelArgs]
	j   *hoard.ChannelJoin
}

// failed implements subject.
func (s *joinSubject) failed(ctx context.Context, f failure) error {
	msg := truncate(f.err.Error(), 500)
	if !f.final {
		return s.w.db.SetChannelJoinError(ctx, s.j.ID, msg)
	}
	return completeTx(ctx, s.w.db, s.job, func(tx *store.DB, _ *river.Client[pgx.Tx]) error {
		_, err := tx.FinishChannelJoin(ctx, s.j.ID, hoard.JoinFailed, 0, "", msg)
		return err
	})
}

// sourceRefused is a join the platform accepted that hoard cannot use as a
// source.
type sourceRefused struct{ message string }

func (e *sourceRefused) Error() string { return e.message }

// addSource makes a joined channel an active source read by the request's
// account: the channel row (created, or updated with what the platform
// tells), the account's READER map with its access hash, and for a new
// channel the request's category. A channel hoard had already keeps its
// category (it changes in the channel's settings, which re-tag its
// packages); kept then says so when the request named another one. isNew
// tells a channel hoard did not have.
func addSource(ctx context.Context, tx *store.DB, j *hoard.ChannelJoin, ref messenger.ChannelRef, ch messenger.Channel) (row *hoard.Channel, isNew bool, kept string, err error) {
	row = &hoard.Channel{PlatformID: ch.ID, Title: ch.Title, Username: ch.Username, Kind: hoard.ChannelSource,
		Category: j.Category, IsActive: true, IsForum: ch.Forum, IsProtected: ch.Protected}
	if ref.IsInvite() {
		row.InviteLink = ref.String()
	}
	existing, err := tx.FindChannelByPlatformID(ctx, ch.ID)
	isNew = hoard.ErrorCode(err) == hoard.ENOTFOUND
	switch {
	case err == nil && existing.Kind == hoard.ChannelDestination:
		return existing, false, "", &sourceRefused{"This is a destination channel; it cannot be a source too."}
	case err == nil && j.Category != "" && j.Category != existing.Category:
		kept = fmt.Sprintf("The channel was added before; its category stays %q (change it in the channel's settings).", existing.Category)
	case err != nil && hoard.ErrorCode(err) != hoard.ENOTFOUND:
		return nil, false, "", err
	}
	if err := tx.UpsertChannel(ctx, row); err != nil {
		return nil, false, "", err
	}
	active := true
	_, after, err := tx.UpdateChannelSettings(ctx, row.ID, store.ChannelSettings{IsActive: &active})
	if err != nil {
		return nil, false, "", err
	}
	if _, err := tx.UpsertChannelMap(ctx, j.AccountID, row.ID, ch.AccessHash, hoard.MapReader); err != nil {
		return nil, false, "", err
	}
	return after, isNew, kept, nil
}
