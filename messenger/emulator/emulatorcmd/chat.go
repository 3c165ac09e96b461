package emulatorcmd

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/telegram"
)

// chatUsage is the help of `hoard chat`.
const chatUsage = `Usage: hoard chat --as USER [--dir DIR]

Talk to the bot as a user of the messenger emulator (TELEGRAM_EMULATOR, or
the one of ` + "`hoard demo`" + ` in DATA_DIR): type a command (/help lists them), the
number of a button to press it, or Ctrl-D to leave. Documents the bot sends
are saved to DIR.
`

// ChatConfig is what `hoard chat` reads of hoard's configuration.
type ChatConfig struct {
	// Emulator is the info file of TELEGRAM_EMULATOR; "" for the demo's
	// emulator in DataDir.
	Emulator string
	DataDir  string
}

// RunChat is `hoard chat`: a small terminal client of the bot for the
// emulator's seeded users, on the real messenger client, reading commands
// from stdin until it ends or ctx does. config reads the configuration
// after the command line is parsed (false: it is invalid, and said so on
// stderr already).
func RunChat(ctx context.Context, args []string, config func() (ChatConfig, bool), stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hoard chat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, chatUsage) }
	as := fs.String("as", "", "the seeded user to sign in as: username or phone (required)")
	dir := fs.String("dir", "", "where received documents are saved (default DATA_DIR/chat/USER)")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || *as == "" {
		if *as == "" && err == nil {
			fmt.Fprint(stderr, chatUsage)
		}
		return ExitUsage
	}
	cfg, ok := config()
	if !ok {
		return ExitUsage
	}
	info, err := chatEmulator(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "hoard chat: %v\n", err)
		return ExitUsage
	}
	user, ok := findChatUser(info, *as)
	if !ok {
		fmt.Fprintf(stderr, "hoard chat: the emulator has no user %q; its users: %s\n", *as, chatUserNames(info))
		return ExitUsage
	}
	if *dir == "" {
		*dir = filepath.Join(cfg.DataDir, "chat", strings.TrimPrefix(user.Username, "@"))
	}
	c := &chatClient{out: stdout, dir: *dir, user: user, reload: func() (telegram.EmulatorInfo, error) { return chatEmulator(cfg) }}
	if err := c.connect(ctx, info); err != nil {
		fmt.Fprintf(stderr, "hoard chat: %v\n", err)
		return ExitFailure
	}
	defer func() { _ = c.current().Close() }()
	if err := c.run(ctx, stdin); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "hoard chat: %v\n", err)
		return ExitFailure
	}
	return ExitOK
}

// chatEmulator reads the info file of the emulator to talk to.
func chatEmulator(cfg ChatConfig) (telegram.EmulatorInfo, error) {
	path := cfg.Emulator
	if path == "" {
		path = filepath.Join(cfg.DataDir, "emulator", "info.json")
		if _, err := os.Stat(path); err != nil {
			return telegram.EmulatorInfo{}, fmt.Errorf("no emulator to talk to: start `hoard demo` (DATA_DIR %s) or set TELEGRAM_EMULATOR", cfg.DataDir)
		}
	}
	info, err := telegram.LoadEmulatorInfo(path)
	if err == nil && info.BotUsername == "" {
		err = errors.New("the emulator has no bot")
	}
	return info, err
}

// findChatUser finds a seeded user by username (with or without @) or
// phone.
func findChatUser(info telegram.EmulatorInfo, who string) (telegram.EmulatorUser, bool) {
	who = strings.TrimPrefix(strings.TrimSpace(who), "@")
	for _, u := range info.Users {
		if strings.EqualFold(u.Username, who) || u.Phone == who || strings.TrimPrefix(u.Phone, "+") == strings.TrimPrefix(who, "+") {
			return u, true
		}
	}
	return telegram.EmulatorUser{}, false
}

func chatUserNames(info telegram.EmulatorInfo) string {
	var names []string
	for _, u := range info.Users {
		names = append(names, u.Username)
	}
	if len(names) == 0 {
		return "none (add \"users\" to the seed)"
	}
	return strings.Join(names, ", ")
}

// chatClient is one terminal session with the bot.
type chatClient struct {
	out  io.Writer
	dir  string
	user telegram.EmulatorUser
	// reload reads the emulator's info again (its addresses after a
	// restart).
	reload func() (telegram.EmulatorInfo, error)

	mu      sync.Mutex
	chat    *telegram.UserChat
	buttons []chatButton // the buttons on screen, numbered from 1
}

// current is the chat's client (a new one after signing in again).
func (c *chatClient) current() *telegram.UserChat {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.chat
}

// chatButton is a numbered button: the message it is on and its data.
type chatButton struct {
	msgID int
	data  []byte
	url   string
}

func (c *chatClient) connect(ctx context.Context, info telegram.EmulatorInfo) error {
	u := c.user
	cfg := telegram.Config{AppID: 1, AppHash: "chat", Endpoint: info.Endpoint(), Sessions: messenger.NewMemorySessionStore(),
		SessionKey: "chat", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Limiter: messenger.NewLimiter(0, 1)}
	chat, err := telegram.NewUserChat(ctx, cfg, u.Phone, info.Code, info.BotUsername)
	if err != nil {
		return fmt.Errorf("sign in as %s: %w", u.Username, err)
	}
	c.mu.Lock()
	c.chat = chat
	c.mu.Unlock()
	me := chat.Self()
	c.printf("Signed in as %s (@%s), talking to @%s.\n", me.FirstName, me.Username, info.BotUsername)
	c.printf("Type a command (/help lists them), a button's number to press it, or Ctrl-D to leave.\n")
	return nil
}

// run shows the bot's messages as they come and sends what is typed.
func (c *chatClient) run(ctx context.Context, stdin io.Reader) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go c.receive(ctx)
	lines := bufio.NewScanner(stdin)
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		if line == "" {
			continue
		}
		if n, err := strconv.Atoi(line); err == nil {
			c.press(ctx, n)
			continue
		}
		c.send(ctx, line)
	}
	return lines.Err()
}

// chatSendTimeout bounds one sending of a typed line: a client whose
// emulator went away (the demo restarted on other addresses) retries the
// old address for ever.
const chatSendTimeout = 10 * time.Second

// send sends a typed line. When the emulator restarted and forgot this
// chat's session (the demo's restarts do), or does not answer, it signs in
// again with the emulator's current addresses and resends.
func (c *chatClient) send(ctx context.Context, line string) {
	err := c.sendOnce(ctx, line)
	if err != nil && ctx.Err() == nil {
		if errors.Is(err, messenger.ErrUnauthorized) {
			c.printf("! the emulator restarted and forgot this chat's session: signing in again\n")
		} else {
			c.printf("! the emulator does not answer (%v): connecting again\n", err)
		}
		if err = c.reconnect(ctx); err == nil {
			err = c.sendOnce(ctx, line)
		}
	}
	if err != nil {
		c.printf("! not sent: %v\n", err)
	}
}

// sendOnce sends line with the current client, for at most chatSendTimeout.
func (c *chatClient) sendOnce(ctx context.Context, line string) error {
	ctx, cancel := context.WithTimeout(ctx, chatSendTimeout)
	defer cancel()
	_, err := c.current().Send(ctx, line)
	return err
}

// reconnect signs in anew with the emulator's current info and follows
// the new client's messages.
func (c *chatClient) reconnect(ctx context.Context) error {
	info, err := c.reload()
	if err != nil {
		return err
	}
	_ = c.current().Close()
	if err := c.connect(ctx, info); err != nil {
		return err
	}
	go c.receive(ctx)
	return nil
}

// receive prints every new or edited message of the bot.
func (c *chatClient) receive(ctx context.Context) {
	chat := c.current()
	for {
		m, err := chat.Next(ctx)
		if err != nil {
			return
		}
		c.show(ctx, m)
	}
}

func (c *chatClient) show(ctx context.Context, m telegram.ChatMessage) {
	var b strings.Builder
	mark := "bot"
	if m.Edited {
		mark = "bot (edited)"
	}
	fmt.Fprintf(&b, "── %s ──\n", mark)
	if m.Text != "" {
		b.WriteString(m.Text + "\n")
	}
	if m.Photo != nil {
		b.WriteString("[photo]\n")
	}
	if m.Document != nil {
		b.WriteString(c.save(ctx, *m.Document) + "\n")
	}
	c.mu.Lock()
	for _, row := range m.Keyboard {
		var labels []string
		for _, btn := range row {
			c.buttons = append(c.buttons, chatButton{msgID: m.ID, data: btn.Data, url: btn.URL})
			labels = append(labels, fmt.Sprintf("[%d] %s", len(c.buttons), btn.Text))
		}
		b.WriteString(strings.Join(labels, "   ") + "\n")
	}
	c.mu.Unlock()
	c.printf("%s", b.String())
}

// save downloads a received document into the folder.
func (c *chatClient) save(ctx context.Context, doc messenger.Document) string {
	name := filepath.Base(filepath.Clean("/" + doc.FileName))
	if name == "/" || name == "." {
		name = fmt.Sprintf("document-%d", doc.ID)
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return fmt.Sprintf("[document %s: %v]", doc.FileName, err)
	}
	path := filepath.Join(c.dir, name)
	f, err := os.Create(path)
	if err == nil {
		err = c.current().Download(ctx, doc, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Sprintf("[document %s (%d bytes): not saved: %v]", doc.FileName, doc.Size, err)
	}
	return fmt.Sprintf("[document %s (%d bytes) saved to %s]", doc.FileName, doc.Size, path)
}

// press presses button n.
func (c *chatClient) press(ctx context.Context, n int) {
	c.mu.Lock()
	var btn chatButton
	ok := n >= 1 && n <= len(c.buttons)
	if ok {
		btn = c.buttons[n-1]
	}
	c.mu.Unlock()
	switch {
	case !ok:
		c.printf("! no button %d\n", n)
	case btn.url != "":
		c.printf("link: %s\n", btn.url)
	default:
		notice, err := c.current().Press(ctx, btn.msgID, btn.data)
		if err != nil {
			c.printf("! the button did not answer: %v\n", err)
		} else if notice != "" {
			c.printf("(%s)\n", notice)
		}
	}
}

func (c *chatClient) printf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.out, format, args...)
}
