// Package bot is hoard's chat bot: the commands users send it in private
// chats (search, browse, link, subscribe, send), and the River workers that
// deliver packages (bot_send) and tell subscribers about new ones
// (notify_subscribers), registered by Register.
//
// It talks to the platform only through the messenger port (messenger.Bot).
// Exactly one process answers commands at a time (a lease in PostgreSQL,
// see Service.Run); every update it answers is claimed in the transaction
// that answers it, and every message the bot sends carries a random id
// derived from what it answers or delivers, so neither a retried job nor a
// crash between sending and committing ever delivers anything twice.
package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// Deps is what the bot needs.
type Deps struct {
	DB     *store.DB
	Bot    messenger.Bot
	Logger *slog.Logger
	// AppURL is the web application's address: users get link codes on
	// its settings page.
	AppURL string
	// AddToChannel, when set, makes the bot an administrator of a
	// destination channel (through a worker account that may), so the bot
	// can copy from it. It returns an error saying what an administrator
	// must do when it cannot.
	AddToChannel func(ctx context.Context, ch hoard.Channel, botUsername string) error
	// Metrics is told about the commands answered and the deliveries'
	// outcomes (default: nobody).
	Metrics Metrics
}

// Metrics is told what the bot does (metrics.Metrics implements it). Its
// methods must be safe for concurrent use and quick.
type Metrics interface {
	// BotCommand is one message or button press answered, by its
	// commandLabel.
	BotCommand(name string)
	// BotDelivery is requests package deliveries reaching outcome (one
	// of the Delivery constants).
	BotDelivery(outcome string, requests int)
}

// Outcomes of a package delivery (BotDelivery).
const (
	DeliverySent        = "sent"
	DeliveryBlocked     = "blocked"      // the user blocked the bot
	DeliveryUnlinked    = "unlinked"     // the target is no longer the user's link
	DeliveryUnpublished = "unpublished"  // the package is not in the destination
	DeliveryFailed      = "failed"       // its attempts spent
	DeliveryMissingPart = "missing_part" // a part is no longer in the destination
)

type noMetrics struct{}

func (noMetrics) BotCommand(string)       {}
func (noMetrics) BotDelivery(string, int) {}

// Register adds the bot's workers (bot_send, notify_subscribers) to a
// River workers bundle.
func Register(workers *river.Workers, deps Deps) error {
	if deps.DB == nil || deps.Bot == nil {
		return errors.New("bot: register: needs a database and a bot")
	}
	deps.defaults()
	if err := river.AddWorkerSafely(workers, &SendWorker{deps: deps}); err != nil {
		return fmt.Errorf("bot: register: %w", err)
	}
	if err := river.AddWorkerSafely(workers, &NotifyWorker{deps: deps}); err != nil {
		return fmt.Errorf("bot: register: %w", err)
	}
	return nil
}

func (d *Deps) defaults() {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Metrics == nil {
		d.Metrics = noMetrics{}
	}
}

// Service answers the bot's commands and button presses (it implements
// messenger.BotHandler). Run it in every bot process: the one holding the
// lease answers, the others wait to take over.
type Service struct {
	deps  Deps
	queue *queue.Client
	id    string
	// slots bounds the answers in progress: each holds a database
	// connection for its transaction and paces its replies on another.
	slots chan struct{}

	mu         sync.Mutex
	self       messenger.User
	lastUpdate time.Time
	started    time.Time
}

// NewService returns the command service of a bot process. id names the
// process in the lease and on the admin page; give every process its own.
func NewService(deps Deps, client *queue.Client, id string) *Service {
	deps.defaults()
	return &Service{deps: deps, queue: client, id: id, slots: make(chan struct{}, maxAnswering)}
}

// maxAnswering is how many updates one process answers at once.
const maxAnswering = 8

// Random id namespaces: each kind of message the bot sends derives its
// random id from its own namespace and what it is about.
const (
	ridReply  = 1 // a reply: chat, message or query id, index
	ridPart   = 2 // a delivered part: request, destination message id
	ridHeader = 3 // a batch's header: batch id
	ridDigest = 4 // a subscription digest: digest id
)

// reply is what answering an update produces: messages to send, and for a
// button press the short notice and the edit of the pressed message.
type reply struct {
	messages []messenger.OutgoingMessage
	notice   string // callbacks: the answer's text
	edit     *edit  // callbacks: new content of the pressed message
}

// edit replaces the content of one of the bot's messages.
type edit struct {
	messageID int
	msg       messenger.OutgoingMessage
}

func (r *reply) say(html string) *reply {
	r.messages = append(r.messages, messenger.OutgoingMessage{HTML: html})
	return r
}

// HandleMessage implements messenger.BotHandler: it answers a private
// message exactly once (see answer).
func (s *Service) HandleMessage(ctx context.Context, m messenger.IncomingMessage) error {
	ctx, cancel := s.handling(ctx)
	defer cancel()
	return s.answer(ctx, store.UpdateMessage, m.ChatID, int64(m.MessageID), m.UserID, func(tx *store.DB) (*reply, error) {
		return s.command(ctx, tx, m)
	})
}

// HandleCallback implements messenger.BotHandler: it answers a button
// press exactly once.
func (s *Service) HandleCallback(ctx context.Context, q messenger.CallbackQuery) error {
	ctx, cancel := s.handling(ctx)
	defer cancel()
	return s.answer(ctx, store.UpdateCallback, q.ChatID, q.QueryID, 0, func(tx *store.DB) (*reply, error) {
		return s.button(ctx, tx, q)
	})
}

// answer answers an update exactly once: in one transaction it claims the
// update (a concurrent or earlier claim wins: nothing is sent; a message
// from a user resumes their paused subscriptions), builds the reply, sends
// it with random ids derived from the update, and commits. A crash before
// the commit leaves the update unclaimed and its side effects undone; the
// process that answers it again sends with the same random ids, which the
// platform does not deliver twice. A build that fails on a user's mistake
// is rolled back whole, and a transaction of its own claims the update
// and tells them (no savepoint around every build: two statements per
// command saved). Any other failure is logged under a new error id and the
// user gets only an apology naming that id: no error's text but a message
// written for users (userMessage) ever reaches a chat.
func (s *Service) answer(ctx context.Context, kind string, chatID, updateID, fromUser int64, build func(tx *store.DB) (*reply, error)) error {
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return ctx.Err()
	}
	err := s.claimAndSend(ctx, kind, chatID, updateID, fromUser, build)
	var m *mistake
	if errors.As(err, &m) {
		err = s.claimAndSend(ctx, kind, chatID, updateID, fromUser, func(*store.DB) (*reply, error) {
			r := new(reply).say(messenger.EscapeHTML(m.message))
			r.notice = m.message
			return r, nil
		})
	}
	if err != nil && ctx.Err() == nil {
		id := newErrorID()
		s.deps.Logger.Error("bot: answer failed", "error_id", id, "chat", chatID, "kind", kind, "err", err)
		s.sorry(ctx, kind, chatID, updateID, id)
	}
	return err
}

// mistake is a build's error that is the user's to fix: they are told its
// message (userMessage).
type mistake struct{ message string }

func (m *mistake) Error() string { return m.message }

// userMessage is the message of an error that was written for the user
// who caused it: a *hoard.Error of any code but EINTERNAL that wraps no
// cause (hoard.Errorf). An error that wraps one — the store's report of a
// value the database refused, a row it did not find — says what went wrong
// inside, in words not meant for a chat: its message is "".
func userMessage(err error) string {
	var e *hoard.Error
	if !errors.As(err, &e) || e.Code == hoard.EINTERNAL || e.Err != nil {
		return ""
	}
	return e.Message
}

// claimAndSend claims the update, builds its reply and sends it in one
// transaction; the build's error rolls it back, and is a *mistake when
// the user should be told.
func (s *Service) claimAndSend(ctx context.Context, kind string, chatID, updateID, fromUser int64, build func(tx *store.DB) (*reply, error)) error {
	return s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		won, err := tx.ClaimBotUpdate(ctx, kind, chatID, updateID, fromUser)
		if err != nil || !won {
			return err
		}
		r, err := build(tx)
		if err == nil {
			return s.send(ctx, kind, chatID, updateID, r)
		}
		if msg := userMessage(err); msg != "" && ctx.Err() == nil {
			return &mistake{message: msg}
		}
		return err
	})
}

// send delivers a reply: the callback's answer and edit, then messages.
func (s *Service) send(ctx context.Context, kind string, chatID, updateID int64, r *reply) error {
	if kind == store.UpdateCallback {
		if err := s.deps.Bot.AnswerCallback(ctx, updateID, r.notice); err != nil {
			s.deps.Logger.Warn("bot: answer button press", "chat", chatID, "err", err)
		}
	}
	if r.edit != nil {
		if err := s.deps.Bot.Edit(ctx, chatID, r.edit.messageID, r.edit.msg); err != nil {
			return fmt.Errorf("edit the pressed message: %w", err)
		}
	}
	for i, m := range r.messages {
		m.RandomID = messenger.DeriveRandomID(ridReply, chatID, updateID, int64(i))
		if _, err := s.deps.Bot.Send(ctx, chatID, m); err != nil && !errors.Is(err, messenger.ErrDuplicate) {
			return fmt.Errorf("send reply %d: %w", i, err)
		}
	}
	return nil
}

// sorryText is the apology for a failure on our side; errorID is the
// id its log record carries, for the user to quote.
func sorryText(errorID string) string {
	return "Something went wrong on our side (error " + errorID + "); please try again in a moment."
}

// newErrorID returns a short random id that ties an apology to its log
// record.
func newErrorID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// sorry tells the user their command failed on our side (the answer's
// transaction rolled back), with the error id of the log record.
func (s *Service) sorry(ctx context.Context, kind string, chatID, updateID int64, errorID string) {
	if kind == store.UpdateCallback {
		_ = s.deps.Bot.AnswerCallback(ctx, updateID, sorryText(errorID))
		return
	}
	_, err := s.deps.Bot.Send(ctx, chatID, messenger.OutgoingMessage{
		HTML:     sorryText(errorID),
		RandomID: messenger.DeriveRandomID(ridReply, chatID, updateID, -1),
	})
	if err != nil && !errors.Is(err, messenger.ErrDuplicate) {
		s.deps.Logger.Warn("bot: could not say sorry", "error_id", errorID, "chat", chatID, "err", err)
	}
}

// handling notes an update and gives its answer a context of its own: the
// end of listening (a lost lease, a shutdown) does not cut an answer short.
func (s *Service) handling(ctx context.Context) (context.Context, context.CancelFunc) {
	s.mu.Lock()
	s.lastUpdate = time.Now()
	s.mu.Unlock()
	return context.WithTimeout(context.WithoutCancel(ctx), handlerTimeout)
}

func (s *Service) username() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.self.Username
}
