package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// AddBotAdminWorker works hoard.AddBotAdminArgs: the account that posts to
// the destination channel makes the bot an administrator there. An account
// that may not (only the owner makes administrators) ends the job: the
// bot's status tells an administrator to do it by hand.
type AddBotAdminWorker struct {
	worker[hoard.AddBotAdminArgs]
	db       *store.DB
	log      *slog.Logger
	platform *platform
}

func newAddBotAdminWorker(p *parts) *AddBotAdminWorker {
	return &AddBotAdminWorker{worker: worker[hoard.AddBotAdminArgs]{fail: p.fail}, db: p.db, log: p.log, platform: p.platform}
}

// Work implements river.Worker.
func (w *AddBotAdminWorker) Work(ctx context.Context, job *river.Job[hoard.AddBotAdminArgs]) error {
	return w.finish(ctx, job, w.work(ctx, job), nil)
}

func (w *AddBotAdminWorker) work(ctx context.Context, job *river.Job[hoard.AddBotAdminArgs]) error {
	ch, err := w.db.FindChannelByID(ctx, job.Args.ChannelID)
	if err != nil {
		return fmt.Errorf("add the bot to channel %d: %w", job.Args.ChannelID, err)
	}
	m, err := w.db.FindWriterMap(ctx, ch.ID, 0)
	if err != nil {
		return fmt.Errorf("add the bot to %q: no signed-in account posts there: %w", ch.Title, err)
	}
	acc, err := w.platform.account(ctx, m.AccountID)
	if err != nil {
		return err
	}
	err = acc.AddBotAdmin(ctx, peerOf(ch, m), job.Args.BotUsername)
	if errors.Is(err, messenger.ErrAdminRequired) {
		w.log.Warn("the account may not make the bot an administrator", "channel", ch.Title, "err", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("make @%s an administrator of %q: %w", job.Args.BotUsername, ch.Title, err)
	}
	w.log.Info("made the bot an administrator of a destination channel", "channel", ch.Title, "bot", job.Args.BotUsername)
	return nil
}
