package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/hoard/hoard/messenger"
)

// fakeBot is the platform as the bot's unit tests need it: what was sent
// to each chat, random-id de-duplication like the platform's, and failures
// on demand. The end-to-end tests (cmd/hoard) use the real adapter against
// the emulator instead.
type fakeBot struct {
	mu        sync.Mutex
	self      messenger.User
	chats     map[int64][]*fakeMessage
	randomIDs map[int64]bool
	nextID    int
	commands  []messenger.BotCommand
	notices   map[int64]string // callback query → answer
	readable  map[int64]bool
	blocked   map[int64]bool
	// copyErr, when set, makes Copy fail with it once copied reaches
	// copyErrAt (messages copied, counted across calls); then it is cleared.
	copyErr   error
	copyErrAt int
	copied    int
	// missing are channel messages that are gone: Copy skips them, as
	// the platform does, and names them in a NotForwardedError.
	missing map[int]bool
	// listening counts the Listen calls running now.
	listening int
}

// fakeMessage is a message in a chat: sent text or photo, or a copy of a
// channel message.
type fakeMessage struct {
	ID       int
	HTML     string
	Keyboard messenger.Keyboard
	Photo    bool
	// Copy is "channel/message" for a copied message.
	Copy string
}

func newFakeBot() *fakeBot {
	return &fakeBot{self: messenger.User{ID: 500, Username: "hoard_bot", Bot: true}, chats: map[int64][]*fakeMessage{},
		randomIDs: map[int64]bool{}, notices: map[int64]string{}, readable: map[int64]bool{}, blocked: map[int64]bool{},
		missing: map[int]bool{}}
}

func (b *fakeBot) Self(context.Context) (messenger.User, error) { return b.self, nil }

func (b *fakeBot) Listen(ctx context.Context, _ messenger.BotHandler) error {
	b.mu.Lock()
	b.listening++
	b.mu.Unlock()
	<-ctx.Done()
	b.mu.Lock()
	b.listening--
	b.mu.Unlock()
	return ctx.Err()
}

func (b *fakeBot) post(chatID int64, randomID int64, m *fakeMessage) (int, error) {
	if b.blocked[chatID] {
		return 0, fmt.Errorf("send: %w", messenger.ErrBlocked)
	}
	if randomID != 0 {
		if b.randomIDs[randomID] {
			return 0, fmt.Errorf("send: %w", messenger.ErrDuplicate)
		}
		b.randomIDs[randomID] = true
	}
	b.nextID++
	m.ID = b.nextID
	b.chats[chatID] = append(b.chats[chatID], m)
	return m.ID, nil
}

func (b *fakeBot) Send(_ context.Context, chatID int64, m messenger.OutgoingMessage) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	limit := messenger.MaxMessageText
	if len(m.Photo) > 0 {
		limit = messenger.MaxCaption
	}
	if utf16Len(m.HTML) > limit {
		return 0, errors.New("MESSAGE_TOO_LONG")
	}
	for _, row := range m.Keyboard {
		for _, btn := range row {
			if len(btn.Data) > messenger.MaxButtonData {
				return 0, errors.New("BUTTON_DATA_INVALID")
			}
		}
	}
	return b.post(chatID, m.RandomID, &fakeMessage{HTML: m.HTML, Keyboard: m.Keyboard, Photo: len(m.Photo) > 0})
}

func (b *fakeBot) Edit(_ context.Context, chatID int64, messageID int, m messenger.OutgoingMessage) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, msg := range b.chats[chatID] {
		if msg.ID == messageID {
			msg.HTML, msg.Keyboard = m.HTML, m.Keyboard
			return nil
		}
	}
	return fmt.Errorf("edit %d: %w", messageID, messenger.ErrNotFound)
}

func (b *fakeBot) AnswerCallback(_ context.Context, queryID int64, text string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.notices[queryID] = text
	return nil
}

func (b *fakeBot) Copy(_ context.Context, chatID, channelID int64, msgIDs []int, randomIDs []int64) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(msgIDs) != len(randomIDs) {
		return 0, errors.New("RANDOM_ID_INVALID")
	}
	var skipped []int
	lead := func(i int) int {
		if len(skipped) > 0 {
			return min(i, slices.Index(msgIDs, skipped[0]))
		}
		return i
	}
	for i, id := range msgIDs {
		if err := b.copyErr; err != nil && b.copied >= b.copyErrAt {
			b.copyErr = nil
			return lead(i), err
		}
		if b.blocked[chatID] {
			return lead(i), fmt.Errorf("copy: %w", messenger.ErrBlocked)
		}
		if b.missing[id] {
			skipped = append(skipped, id)
			continue
		}
		if b.randomIDs[randomIDs[i]] {
			continue // delivered before: not again
		}
		b.randomIDs[randomIDs[i]] = true
		b.copied++
		b.nextID++
		b.chats[chatID] = append(b.chats[chatID], &fakeMessage{ID: b.nextID, Copy: fmt.Sprintf("%d/%d", channelID, id)})
	}
	if len(skipped) > 0 {
		return lead(len(msgIDs)), fmt.Errorf("copy: %w", &messenger.NotForwardedError{MsgIDs: skipped})
	}
	return len(msgIDs), nil
}

func (b *fakeBot) SetCommands(_ context.Context, cmds []messenger.BotCommand) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.commands = cmds
	return nil
}

func (b *fakeBot) CanRead(_ context.Context, channelID int64) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.readable[channelID], nil
}

// failCopy makes Copy fail with err after after more messages.
func (b *fakeBot) failCopy(after int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.copyErr, b.copyErrAt = err, b.copied+after
}

// messages returns a copy of what a chat holds.
func (b *fakeBot) messages(chatID int64) []fakeMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]fakeMessage, len(b.chats[chatID]))
	for i, m := range b.chats[chatID] {
		out[i] = *m
	}
	return out
}

// last returns the newest message of a chat.
func (b *fakeBot) last(chatID int64) fakeMessage {
	ms := b.messages(chatID)
	if len(ms) == 0 {
		return fakeMessage{}
	}
	return ms[len(ms)-1]
}

var _ messenger.Bot = (*fakeBot)(nil)
