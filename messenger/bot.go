package messenger

import (
	"context"
	"io"
	"time"

	"github.com/hoard/hoard"
)

// This file is the bot half of the port: what the chat bot (package bot)
// needs from the platform. The gotd adapter (messenger/telegram) implements
// it; the emulator (messenger/emulator) serves the same MTProto calls in
// tests and the demo.

// IncomingMessage is a private text message (usually a command) received by
// the bot.
type IncomingMessage struct {
	// MessageID is the message's id in the private chat; together with
	// ChatID it identifies the message for exactly-once answering.
	MessageID int
	// ChatID is the private chat: the user's id.
	ChatID int64
	UserID int64
	// AccessHash is the bot's access hash for the user (per viewer), kept
	// so that a later delivery can address the user from any process.
	AccessHash int64
	Username   string
	FirstName  string
	Text       string
	Date       time.Time
}

// CallbackQuery is a press of an inline keyboard button on one of the bot's
// messages. Answer it at once with Bot.AnswerCallback (late answers fail).
type CallbackQuery struct {
	QueryID    int64
	ChatID     int64
	UserID     int64
	AccessHash int64
	// MessageID is the bot's message whose button was pressed.
	MessageID int
	// Data is the button's data (at most MaxButtonData bytes).
	Data []byte
}

// BotHandler receives the bot's updates while Bot.Listen runs. Each call
// runs in its own goroutine; returning an error only logs it.
type BotHandler interface {
	HandleMessage(ctx context.Context, m IncomingMessage) error
	HandleCallback(ctx context.Context, q CallbackQuery) error
}

// MaxButtonData is the platform's limit on an inline button's callback data
// (BUTTON_DATA_INVALID above it).
const MaxButtonData = 64

// Text limits of bot messages, in UTF-16 code units as the platform counts:
// a text message, and a media caption.
const (
	MaxMessageText = 4096
	MaxCaption     = 1024
)

// Button is one inline keyboard button: a callback button (Data) or a link
// (URL). Exactly one of Data and URL is set.
type Button struct {
	Text string
	Data []byte
	URL  string
}

// Keyboard is an inline keyboard: rows of buttons.
type Keyboard [][]Button

// OutgoingMessage is what the bot sends to a chat: an HTML text (see
// EscapeHTML) with an optional inline keyboard, or a photo with the HTML as
// its caption.
type OutgoingMessage struct {
	HTML     string
	Keyboard Keyboard
	// Photo, when not empty, is sent as a photo (JPEG or PNG bytes) with
	// HTML as its caption (at most MaxCaption).
	Photo     []byte
	PhotoName string
	// RandomID, when not 0, makes the send idempotent: sending again with
	// the same RandomID delivers nothing new (the platform answers
	// RANDOM_ID_DUPLICATE, reported as ErrDuplicate). Derive it from what
	// the message answers (see DeriveRandomID).
	RandomID int64
}

// BotCommand is one entry of the command list clients show.
type BotCommand struct {
	Command     string // without the slash
	Description string
}

// Bot is the chat bot, signed in with a bot token. Implementations are safe
// for concurrent use. Every message the bot sends passes its rate limits
// (BotLimits), so callers never pace themselves.
type Bot interface {
	// Self returns the bot user.
	Self(ctx context.Context) (User, error)
	// Listen receives updates and hands them to h until ctx ends. It
	// resumes from the update state stored by the last Listen of this bot
	// in any process (the session store is shared), so updates that
	// arrived while no process listened are delivered, not lost. Call it
	// in at most one process at a time (the caller holds a lease).
	Listen(ctx context.Context, h BotHandler) error
	// Send sends a message to a private chat and returns its id. The user
	// must have written to the bot (in any process of this bot).
	// USER_IS_BLOCKED and deactivated users are ErrBlocked.
	Send(ctx context.Context, chatID int64, m OutgoingMessage) (int, error)
	// Edit replaces the text and keyboard of one of the bot's messages.
	Edit(ctx context.Context, chatID int64, messageID int, m OutgoingMessage) error
	// AnswerCallback answers a button press; text (may be empty) shows as
	// a short notice.
	AnswerCallback(ctx context.Context, queryID int64, text string) error
	// Copy copies messages of a channel the bot can read (as its
	// administrator) to a chat without the "forwarded from" header, in the
	// order given, several per request where the platform allows.
	// randomIDs (one per message) make it idempotent: messages already
	// delivered with their random id are not delivered again (no error).
	// On a partial failure it returns how many leading messages are known
	// delivered together with the error. Messages the platform cannot
	// forward (deleted, never posted) do not stop the copy: the others
	// are delivered, and the error is a *NotForwardedError naming the
	// ones that did not arrive.
	Copy(ctx context.Context, chatID int64, channelID int64, msgIDs []int, randomIDs []int64) (int, error)
	// SetCommands sets the command list private chats show.
	SetCommands(ctx context.Context, cmds []BotCommand) error
	// CanRead reports whether the bot can read (copy from) a channel.
	CanRead(ctx context.Context, channelID int64) (bool, error)
}

// FileReader reads the files of a channel's posts by message id. The bot
// is one: it administers the destination channel, so the web application
// serves downloads through a bot session of its own instead of an
// account's, whose session one worker process holds at a time.
type FileReader interface {
	// Posts fetches posts of a channel by id, in the order asked; posts
	// that are gone are left out.
	Posts(ctx context.Context, channelID int64, ids []int) ([]Message, error)
	// Download writes a document as Account.Download does; req.Channel
	// needs only its ID.
	Download(ctx context.Context, req DownloadRequest, w io.WriterAt) error
}

// BotLimits are the platform's limits on what a bot sends: about one
// message per second per chat (with a small burst) and 30 per second
// overall.
type BotLimits struct {
	PerChat      float64
	PerChatBurst int
	Global       float64
}

// DefaultBotLimits are the platform's documented bot limits.
var DefaultBotLimits = BotLimits{PerChat: 1, PerChatBurst: 3, Global: 30}

// DeriveRandomID derives a message random id from what the message is
// (for example a delivery request and a part, or a chat and the message it
// answers), so that a retried or resumed send reuses it. The result is
// never 0.
func DeriveRandomID(parts ...int64) int64 {
	var h uint64 = 0xcbf29ce484222325
	for _, p := range parts {
		for i := range 8 {
			h ^= uint64(byte(p >> (8 * i)))
			h *= 0x100000001b3
		}
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	if h == 0 {
		h = 1
	}
	return int64(h)
}

// Pacer spaces requests under rate limits. Implementations shared through
// the database hold the limits across every process; the in-memory
// MemoryPacer holds them within one.
type Pacer interface {
	// WaitN blocks until n more requests (one request carrying n
	// messages) may be made under every one of limits, or ctx ends. The
	// limits are taken in turn: a limit's n slots are reserved once the
	// earlier limits' are due, so a request that waits for a narrow limit
	// (its chat) does not hold slots of a broad one (the whole bot) that
	// others could use meanwhile.
	WaitN(ctx context.Context, n int, limits ...hoard.RateLimit) error
}
