package jobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/riverqueue/river"
)

// AddBotAdminWorker works hoard.AddBotAdminArgs: the account that posts to
// the destination channel makes the bot an administrator there. An account
// that may not (only the owner makes administrators) ends the job: the
// bot's status tells an administrator to do it by hand.
type AddBotAdminWorker struct {
	river.WorkerDefaults[hoard.AddBotAdminArgs]
	deps Deps
}

// Work implements river.Worker.
func (w *AddBotAdminWorker) Work(ctx context.Context, job *river.Job[hoard.AddBotAdminArgs]) error {
	d := &w.deps
	ch, err := d.DB.FindChannelByID(ctx, job.Args.ChannelID)
	if err != nil {
		return jobOutcome(fmt.Errorf("add the bot to channel %d: %w", job.Args.ChannelID, err))
	}
	m, err := d.DB.FindWriterMap(ctx, ch.ID, 0)
	if err != nil {
		return jobOutcome(fmt.Errorf("add the bot to %q: no signed-in account posts there: %w", ch.Title, err))
	}
	acc, err := d.account(ctx, m.AccountID)
	if err != nil {
		return jobOutcome(err)
	}
	err = acc.AddBotAdmin(ctx, peerOf(ch, m), job.Args.BotUsername)
	if errors.Is(err, messenger.ErrAdminRequired) {
		d.Logger.Warn("the account may not make the bot an administrator", "channel", ch.Title, "err", err)
		return nil
	}
	if err != nil {
		return jobOutcome(fmt.Errorf("make @%s an administrator of %q: %w", job.Args.BotUsername, ch.Title, err))
	}
	d.Logger.Info("made the bot an administrator of a destination channel", "channel", ch.Title, "bot", job.Args.BotUsername)
	return nil
}
