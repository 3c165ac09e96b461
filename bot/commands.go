package bot

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
)

// Commands is the command list clients show (Bot.SetCommands).
var Commands = []messenger.BotCommand{
	{Command: "search", Description: "Search the catalog: /search dragon"},
	{Command: "latest", Description: "The newest packages: /latest 10"},
	{Command: "package", Description: "Show a package and send it: /package 123"},
	{Command: "group", Description: "Show a group, or find groups by name"},
	{Command: "sendgroup", Description: "Send every package of a group: /sendgroup 12"},
	{Command: "subscribe", Description: "Hear about new matching packages: /subscribe dragon"},
	{Command: "unsubscribe", Description: "Stop a subscription: /unsubscribe dragon (or all)"},
	{Command: "subscriptions", Description: "Your subscriptions"},
	{Command: "link", Description: "Link this chat to your hoard account: /link CODE"},
	{Command: "unlink", Description: "Unlink this chat"},
	{Command: "help", Description: "What I can do"},
}

// handler answers one command for a linked user.
type handler func(s *Service, ctx context.Context, tx *store.DB, u linkedUser, args string) (*reply, error)

// linkedUser is the hoard user a chat is linked to.
type linkedUser struct {
	link *hoard.MessengerLink
	chat int64
}

// linkedCommands need a linked account.
var linkedCommands = map[string]handler{
	"search":        (*Service).search,
	"latest":        (*Service).latest,
	"package":       (*Service).showPackage,
	"group":         (*Service).group,
	"sendgroup":     (*Service).sendGroup,
	"subscribe":     (*Service).subscribe,
	"unsubscribe":   (*Service).unsubscribe,
	"subscriptions": (*Service).subscriptions,
	"unlink":        (*Service).unlink,
}

// command answers a message: /start, /help and /link for anyone, the rest
// for linked users; anything else gets a short help.
func (s *Service) command(ctx context.Context, tx *store.DB, m messenger.IncomingMessage) (*reply, error) {
	cmd, ok := parseCommand(m.Text, s.username())
	s.deps.Metrics.BotCommand(commandLabel(cmd, ok))
	if !ok {
		return new(reply).say("I answer commands. Send /help to see them."), nil
	}
	if err := checkArgs(cmd); err != nil {
		return nil, err
	}
	switch cmd.name {
	case "start":
		if code, ok := strings.CutPrefix(cmd.args, linkPayload); ok {
			return s.link(ctx, tx, m, code)
		}
		return new(reply).say(s.welcome()), nil
	case "help":
		return new(reply).say(helpText()), nil
	case "link":
		return s.link(ctx, tx, m, cmd.args)
	}
	h, known := linkedCommands[cmd.name]
	if !known {
		return new(reply).say("I do not know /" + text(cmd.name) + ". Send /help to see what I can do."), nil
	}
	link, err := tx.FindMessengerLinkByPlatformUser(ctx, m.UserID)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return new(reply).say(s.notLinked()), nil
	} else if err != nil {
		return nil, err
	}
	return h(s, ctx, tx, linkedUser{link: link, chat: m.ChatID}, cmd.args)
}

// argNames name each command's argument in the reply that refuses it;
// other commands' arguments are "The text after the command".
var argNames = map[string]string{
	"search":      "The search",
	"latest":      "The number",
	"package":     "The package number",
	"group":       "The group name or number",
	"sendgroup":   "The group number",
	"subscribe":   "The pattern",
	"unsubscribe": "The pattern",
	"link":        "The link code",
	"start":       "The link code",
}

// checkArgs refuses a command's argument by the rules of the web's
// parameters (hoard.CheckParam: UTF-8 text without NUL or other control
// characters, at most hoard.MaxParamLen characters): an EINVALID error
// naming the argument, which the user is told. Nothing a chat sends
// reaches the database as a value it refuses.
func checkArgs(cmd command) error {
	name, ok := argNames[cmd.name]
	if !ok {
		name = "The text after the command"
	}
	return hoard.CheckParam(name, cmd.args, hoard.MaxParamLen)
}

// commandLabel names a message for the metrics from a bounded set: the
// command's name when the bot has that command, "unknown" for another
// command, "text" for a message that is none.
func commandLabel(cmd command, ok bool) string {
	_, linked := linkedCommands[cmd.name]
	switch {
	case !ok:
		return "text"
	case linked, cmd.name == "start", cmd.name == "help", cmd.name == "link":
		return cmd.name
	}
	return "unknown"
}

// notLinked is the one sentence an unlinked user gets.
func (s *Service) notLinked() string {
	return fmt.Sprintf("This chat is not linked to a hoard account yet: get a link code on %s and send it here with /link CODE.",
		messenger.EscapeHTML(s.settingsURL()))
}

func (s *Service) settingsURL() string { return strings.TrimRight(s.deps.AppURL, "/") + "/settings" }

func (s *Service) welcome() string {
	return "👋 <b>Hi! I am hoard's bot.</b> I search the catalog and send you packages.\n\n" +
		"To start, link this chat to your hoard account: open " + messenger.EscapeHTML(s.settingsURL()) +
		", press <i>Get a link code</i> and follow the link shown there (or send /link CODE).\n\nSend /help to see every command."
}

func helpText() string {
	var b strings.Builder
	b.WriteString("<b>What I can do</b>\n")
	for _, c := range Commands {
		fmt.Fprintf(&b, "/%s — %s\n", c.Command, messenger.EscapeHTML(c.Description))
	}
	b.WriteString("\nEverything except /link and /help needs a linked account.")
	return b.String()
}

// /link attempts of one chat: at most linkMaxFailures failed ones within
// linkWindow (a successful one is given back), then the chat waits
// linkLockout.
const (
	linkMaxFailures = 5
	linkWindow      = 15 * time.Minute
	linkLockout     = 15 * time.Minute
)

// link links the chat to the user whose one-time code it sent.
func (s *Service) link(ctx context.Context, tx *store.DB, m messenger.IncomingMessage, code string) (*reply, error) {
	code = strings.TrimSpace(code)
	if code == "" {
		return new(reply).say("Send the code from " + messenger.EscapeHTML(s.settingsURL()) + " like this: /link ABCD2345"), nil
	}
	keys := []store.ThrottleKey{{Key: fmt.Sprintf("bot-link:%d", m.ChatID), Max: linkMaxFailures}}
	th, err := tx.ReserveLoginAttempt(ctx, keys, linkWindow, linkLockout)
	if err != nil {
		return nil, err
	}
	if !th.Allowed {
		return new(reply).say(fmt.Sprintf("Too many wrong codes. Try again in %d minutes.", int(time.Until(th.RetryAt).Minutes())+1)), nil
	}
	link, err := tx.ConsumeLinkCode(ctx, hoard.LinkCodeHash(code), m.UserID, m.AccessHash, m.Username)
	if hoard.ErrorCode(err) == hoard.EINVALID {
		return new(reply).say("This link code is not valid or has expired. Get a new one on " + messenger.EscapeHTML(s.settingsURL()) + "."), nil
	} else if err != nil {
		return nil, err
	}
	if err := tx.RefundLoginAttempt(ctx, keys); err != nil {
		return nil, err
	}
	u, err := tx.FindUserByID(ctx, link.UserID)
	if err != nil {
		return nil, err
	}
	return new(reply).say("✅ <b>Linked</b> to " + text(u.Email) + ". Packages you send from hoard arrive here.\n\n" +
		"Try /latest, /search or /help."), nil
}

func (s *Service) unlink(ctx context.Context, tx *store.DB, u linkedUser, _ string) (*reply, error) {
	if err := tx.DeleteMessengerLink(ctx, u.link.UserID); err != nil {
		return nil, err
	}
	return new(reply).say("Unlinked. This chat gets nothing from hoard any more; link it again any time with a new code."), nil
}

func (s *Service) subscribe(ctx context.Context, tx *store.DB, u linkedUser, args string) (*reply, error) {
	if args == "" {
		return new(reply).say("Tell me what to look for: /subscribe dragon"), nil
	}
	sub, err := tx.CreateSubscription(ctx, u.link.UserID, args)
	if err != nil {
		return nil, err
	}
	return new(reply).say("🔔 Subscribed to “" + text(sub.Pattern) + "”. I will tell you when a matching package arrives."), nil
}

func (s *Service) unsubscribe(ctx context.Context, tx *store.DB, u linkedUser, args string) (*reply, error) {
	switch {
	case args == "":
		return new(reply).say("Say which: /unsubscribe dragon, or /unsubscribe all"), nil
	case strings.EqualFold(args, "all"):
		n, err := tx.DeleteAllSubscriptions(ctx, u.link.UserID)
		if err != nil {
			return nil, err
		}
		return new(reply).say(fmt.Sprintf("🔕 Removed %s.", plural(int(n), "subscription"))), nil
	}
	if err := tx.DeleteSubscription(ctx, u.link.UserID, args); hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return new(reply).say("You have no subscription to “" + text(args) + "”. Send /subscriptions to see yours."), nil
	} else if err != nil {
		return nil, err
	}
	return new(reply).say("🔕 Unsubscribed from “" + text(args) + "”."), nil
}

func (s *Service) subscriptions(ctx context.Context, tx *store.DB, u linkedUser, _ string) (*reply, error) {
	subs, err := tx.ListSubscriptions(ctx, u.link.UserID)
	if err != nil {
		return nil, err
	}
	if len(subs) == 0 {
		return new(reply).say("You have no subscriptions. Add one with /subscribe dragon"), nil
	}
	lines := make([]string, len(subs))
	for i, sub := range subs {
		lines[i] = fmt.Sprintf("%d. %s <i>(since %s)</i>", i+1, text(sub.Pattern), sub.CreatedAt.UTC().Format("2006-01-02"))
	}
	return new(reply).say(fitLines("🔔 <b>Your subscriptions</b>\n", lines, "\nRemove one with /unsubscribe PATTERN.",
		messenger.MaxMessageText)), nil
}
