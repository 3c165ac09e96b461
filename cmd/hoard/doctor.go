package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/telegram"
	"github.com/hoard/hoard/sessionlease"
)

// doctor checks a deployment against the messaging platform before any
// ingestion (`hoard doctor`): it signs in with the configured accounts and
// the bot, reads each account's home data centre and Premium state,
// resolves the destination and every active source channel, checks that
// the bot can read the destination, and reads the first chunk of the
// newest file of each source channel from the data centre that stores it.
// Each check prints one line; a failed one says what to do. It uses the
// sessions under their leases like any process, so a session a running
// hoard holds is skipped, not shared.
type doctor struct {
	a       *app
	out     io.Writer
	clients *telegram.AccountPool
	failed  int
	// accounts are the accounts signed in by this run, by id.
	accounts map[int64]*telegram.Account
}

// runDoctor runs `hoard doctor`: exit 0 when every check passed (or was
// skipped), 1 when one failed, 2 for a bad command line or configuration.
func runDoctor(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if err := noFlags("doctor", args, stderr); err != nil {
		return exitUsage
	}
	cfg, ok := configOrExit(getenv, stderr)
	if !ok {
		return exitUsage
	}
	if err := cfg.CheckAuthSecret(); err != nil {
		fmt.Fprintf(stderr, "hoard doctor: %v (the stored messaging sessions are encrypted with it)\n", err)
		return exitUsage
	}
	a, err := openApp(ctx, cfg, botPool(cfg.NewLogger()))
	if err != nil {
		fmt.Fprintf(stderr, "hoard doctor: %v\n", err)
		return exitFailure
	}
	defer a.close()
	d := &doctor{a: a, out: stdout, accounts: map[int64]*telegram.Account{}}
	d.run(ctx)
	if d.failed > 0 {
		fmt.Fprintf(stdout, "%d check(s) failed.\n", d.failed)
		return exitFailure
	}
	fmt.Fprintln(stdout, "Every check passed.")
	return exitOK
}

// line prints one check: "ok", "FAIL" (counted, with what to do) or
// "skip".
func (d *doctor) line(status, subject, detail, todo string) {
	if status == "FAIL" {
		d.failed++
	}
	s := fmt.Sprintf("%-4s  %s: %s", status, subject, detail)
	if todo != "" {
		s += " — " + todo
	}
	fmt.Fprintln(d.out, s)
}

func (d *doctor) run(ctx context.Context) {
	clients, err := d.a.newAccountClients()
	if err != nil {
		d.line("FAIL", "platform", err.Error(), "set TELEGRAM_APP_ID and TELEGRAM_APP_HASH (see README)")
		return
	}
	d.clients = clients
	d.checkAccounts(ctx)
	d.checkDestinations(ctx)
	d.checkBot(ctx)
	d.checkSources(ctx)
}

// checkAccounts signs every active account in with its stored session.
func (d *doctor) checkAccounts(ctx context.Context) {
	accounts, err := d.a.db.ListAccounts(ctx)
	if err != nil {
		d.line("FAIL", "database", err.Error(), "check DATABASE_URL")
		return
	}
	if len(accounts) == 0 {
		d.line("FAIL", "accounts", "no messenger account is configured", "add one on the Messaging page and sign it in")
	}
	for _, acc := range accounts {
		subject := "account " + cmpOr(acc.DisplayName, acc.Phone)
		if !acc.IsActive {
			d.line("skip", subject, "not active", "")
			continue
		}
		if acc.AuthState != hoard.AuthAuthenticated {
			d.line("FAIL", subject, fmt.Sprintf("not signed in (%s)", acc.AuthState), "sign it in on the Messaging page")
			continue
		}
		client, err := d.clients.Account(ctx, acc.ID)
		if errors.Is(err, sessionlease.ErrBusy) {
			d.line("skip", subject, "its session is in use by a running hoard process", "its checks are skipped; stop that process to run them here")
			continue
		}
		if err != nil {
			d.line("FAIL", subject, describe(err), whatToDo(err))
			continue
		}
		self, err := client.Self(ctx)
		if err != nil {
			d.line("FAIL", subject, describe(err), whatToDo(err))
			continue
		}
		ta, ok := client.(*telegram.Account)
		if !ok {
			d.line("skip", subject, fmt.Sprintf("a client hoard cannot check (%T)", client), "")
			continue
		}
		d.accounts[acc.ID] = ta
		premium := "no"
		if self.Premium {
			premium = "yes (files up to 4,000 MiB whole)"
		}
		d.line("ok", subject, fmt.Sprintf("signed in as %s, home data centre %d, Premium: %s", userName(self), ta.HomeDC(), premium), "")
	}
}

// checkDestinations resolves each destination channel through the
// account that posts there.
func (d *doctor) checkDestinations(ctx context.Context) {
	dests, err := d.a.db.ListChannels(ctx, hoard.ChannelDestination)
	if err != nil {
		d.line("FAIL", "database", err.Error(), "")
		return
	}
	if len(dests) == 0 {
		d.line("FAIL", "destination", "no destination channel is configured", "choose one on the Messaging page")
	}
	for _, ch := range dests {
		subject := fmt.Sprintf("destination “%s”", ch.Title)
		m, err := d.a.db.FindWriterMap(ctx, ch.ID, 0)
		if err != nil {
			d.line("FAIL", subject, "no signed-in account posts there", "give a signed-in account the channel as its destination (Messaging page)")
			continue
		}
		acc := d.accounts[m.AccountID]
		if acc == nil {
			d.line("skip", subject, "its account was not checked", "")
			continue
		}
		info, err := acc.ChannelInfo(ctx, messenger.PeerOf(&ch, m))
		if err != nil {
			d.line("FAIL", subject, describe(err), whatToDo(err))
			continue
		}
		d.line("ok", subject, fmt.Sprintf("the account reaches it (%s)", channelKind(info)), "")
	}
}

// checkBot signs the bot in with a session of this process's own and
// checks that it can read every destination channel (it copies packages
// from there, as an administrator).
func (d *doctor) checkBot(ctx context.Context) {
	cfg, token, err := d.a.botConfig()
	if errors.Is(err, errNoBotToken) {
		d.line("skip", "bot", "no BOT_TOKEN", "set BOT_TOKEN for the chat bot (see README, Bot)")
		return
	}
	if err != nil {
		d.line("FAIL", "bot", err.Error(), "")
		return
	}
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	lease, err := d.a.leases.TakeSlot(wait, botSessionKey, botSlots)
	if err != nil {
		d.line("skip", "bot", "every bot session is in use by running hoard processes", "stop one to check the bot here")
		return
	}
	defer lease.Release(context.WithoutCancel(ctx))
	cfg.SessionKey, cfg.StateKey = lease.Key(), botSessionKey
	b, err := telegram.NewBot(ctx, cfg, token)
	if err != nil {
		d.line("FAIL", "bot", describe(err), "check BOT_TOKEN (BotFather gives it)")
		return
	}
	defer b.Close()
	self, err := b.Self(ctx)
	if err != nil {
		d.line("FAIL", "bot", describe(err), whatToDo(err))
		return
	}
	d.line("ok", "bot @"+self.Username, "signed in", "")
	dests, _ := d.a.db.ListChannels(ctx, hoard.ChannelDestination)
	for _, ch := range dests {
		subject := fmt.Sprintf("bot @%s in “%s”", self.Username, ch.Title)
		ok, err := b.CanRead(ctx, ch.PlatformID)
		switch {
		case err != nil:
			d.line("FAIL", subject, describe(err), whatToDo(err))
		case !ok:
			d.line("FAIL", subject, "the bot is not an administrator of the destination, so it cannot send its packages",
				fmt.Sprintf("add @%s to “%s” as an administrator (it needs no further rights)", self.Username, ch.Title))
		default:
			d.line("ok", subject, "an administrator: it can send packages from there", "")
		}
	}
}

// checkSources resolves every active source channel and reads the first
// chunk of its newest file from the data centre that stores it.
func (d *doctor) checkSources(ctx context.Context) {
	maps, err := d.a.db.ListScanMaps(ctx)
	if err != nil {
		d.line("FAIL", "database", err.Error(), "")
		return
	}
	for i := range maps {
		m := &maps[i]
		ch, err := d.a.db.FindChannelByID(ctx, m.ChannelID)
		if err != nil {
			d.line("FAIL", "database", err.Error(), "")
			continue
		}
		subject := fmt.Sprintf("source “%s”", ch.Title)
		acc := d.accounts[m.AccountID]
		if acc == nil {
			d.line("skip", subject, "its account was not checked", "")
			continue
		}
		d.line(d.checkSource(ctx, acc, messenger.PeerOf(ch, m)))
	}
}

// checkSource is one source channel's line.
func (d *doctor) checkSource(ctx context.Context, acc *telegram.Account, peer messenger.Channel) (status, subject, detail, todo string) {
	subject = fmt.Sprintf("source “%s”", peer.Title)
	info, err := acc.ChannelInfo(ctx, peer)
	if err != nil {
		return "FAIL", subject, describe(err), whatToDo(err)
	}
	peer.Forum, peer.Protected = info.Forum, info.Protected
	msg, found, err := acc.LatestDocument(ctx, peer)
	if err != nil {
		return "FAIL", subject, describe(err), whatToDo(err)
	}
	if !found {
		return "ok", subject, fmt.Sprintf("reachable (%s), no file posted yet", channelKind(info)), ""
	}
	doc := msg.Document
	start := time.Now()
	err = acc.Download(ctx, messenger.DownloadRequest{Channel: peer, MessageID: msg.ID, Document: *doc, Limit: 1, Threads: 1}, discardAt{})
	if err != nil {
		todo := fmt.Sprintf("hoard must reach every data centre of the platform (here DC %d): check firewalls and proxies between this host and the platform",
			doc.DCID)
		if more := specificToDo(err); more != "" {
			todo += "; " + more
		}
		return "FAIL", subject, fmt.Sprintf("the newest file “%s” (data centre %d) cannot be read: %s", doc.FileName, doc.DCID, describe(err)), todo
	}
	return "ok", subject, fmt.Sprintf("reachable (%s); the first chunk of its newest file “%s” read from data centre %d in %s",
		channelKind(info), doc.FileName, doc.DCID, time.Since(start).Round(time.Millisecond)), ""
}

// discardAt is an io.WriterAt that keeps nothing.
type discardAt struct{}

func (discardAt) WriteAt(p []byte, _ int64) (int, error) { return len(p), nil }

func channelKind(ch messenger.Channel) string {
	var parts []string
	switch {
	case ch.Forum:
		parts = append(parts, "a forum")
	case ch.Broadcast:
		parts = append(parts, "a channel")
	default:
		parts = append(parts, "a group")
	}
	if ch.Protected {
		parts = append(parts, "protected: files are uploaded again, not re-sent")
	}
	return strings.Join(parts, ", ")
}

func userName(u messenger.User) string {
	if u.Username != "" {
		return "@" + u.Username
	}
	return strings.TrimSpace(u.FirstName + " " + u.LastName)
}

// describe is an error's message for a check's line: hoard's own when it
// has one, else the error.
func describe(err error) string {
	if msg := hoard.ErrorMessage(err); msg != "" && hoard.ErrorCode(err) != hoard.EINTERNAL {
		return msg + " (" + err.Error() + ")"
	}
	return err.Error()
}

// whatToDo says what a person can do about a platform error.
func whatToDo(err error) string {
	if todo := specificToDo(err); todo != "" {
		return todo
	}
	return "check the network between this host and the platform"
}

// specificToDo is what to do about an error hoard recognises ("" for
// any other).
func specificToDo(err error) string {
	if fw, ok := messenger.AsFloodWait(err); ok {
		return fmt.Sprintf("the platform asks to wait %s: run hoard doctor again after that", fw.RetryAfter)
	}
	switch {
	case errors.Is(err, messenger.ErrUnauthorized):
		return "sign the account in again on the Messaging page"
	case errors.Is(err, messenger.ErrAccessLost):
		return "the account lost access to the channel: join it again, or remove the channel on the Messaging page"
	case errors.Is(err, messenger.ErrNotFound):
		return "the channel or file no longer exists on the platform"
	case errors.Is(err, sessionlease.ErrBusy):
		return "a running hoard process uses this session; stop it to check from here"
	}
	return ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
