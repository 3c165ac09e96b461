package bot

import (
	"bytes"
	"context"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/paramtest"
)

func TestHostileArgumentsGetTheWebsRefusal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const chat = 61
	e.user("hostile@example.com", chat)
	e.pkg("Red Dragon.zip", 1)
	commands := []struct{ command, arg string }{
		{"search", "The search"},
		{"subscribe", "The pattern"},
		{"unsubscribe", "The pattern"},
		{"group", "The group name or number"},
		{"package", "The package number"},
		{"sendgroup", "The group number"},
		{"latest", "The number"},
		{"link", "The link code"},
		{"start", "The link code"},
		{"subscriptions", "The text after the command"},
		{"unlink", "The text after the command"},
		{"help", "The text after the command"},
		{"frobnicate", "The text after the command"},
	}
	for _, c := range commands {
		for _, h := range paramtest.HostileValues {
			t.Run(c.command+"/"+h.Name, func(t *testing.T) {
				want := c.arg + " " + h.Says
				if got := e.answered(chat, "/"+c.command+" "+h.Value); got != want {
					t.Errorf("answer = %q, want %q", got, want)
				}
			})
		}
	}
	// Nothing was stored on the way: the chat is still linked and has no
	// subscription.
	if got := e.answered(chat, "/subscriptions"); !strings.Contains(got, "no subscriptions") {
		t.Errorf("/subscriptions after the hostile ones = %q", got)
	}
}

// lockedBuffer is a log destination safe for the service's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestInternalErrorsReachTheChatOnlyAsAnApology(t *testing.T) {
	t.Parallel()
	sorry := regexp.MustCompile(`^Something went wrong on our side \(error ([0-9a-f]{8})\); please try again in a moment\.$`)
	tests := []struct {
		name    string
		breakIt string // SQL that makes the store fail
		command string
		logged  string // in the log record of the failure
	}{
		{"a table gone", `ALTER TABLE bot_subscriptions RENAME TO bot_subscriptions_gone`, "/subscriptions", `bot_subscriptions`},
		{"a value the database refuses", `ALTER TABLE bot_subscriptions ADD CONSTRAINT no_forbidden CHECK (pattern <> 'forbidden')`,
			"/subscribe forbidden", `no_forbidden`},
		{"a search that fails", `ALTER TABLE packages RENAME TO packages_gone`, "/search dragon", `packages`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			logs := &lockedBuffer{}
			e.svc.deps.Logger = slog.New(slog.NewTextHandler(logs, nil))
			const chat = 62
			e.user("victim@example.com", chat)
			e.exec(tt.breakIt)
			err := e.svc.HandleMessage(context.Background(), messenger.IncomingMessage{MessageID: 1, ChatID: chat, UserID: chat,
				AccessHash: 1, Text: tt.command})
			if err == nil {
				t.Fatal("the broken store did not fail the answer")
			}
			got := e.bot.messages(chat)
			if len(got) != 1 {
				t.Fatalf("%d answers, want the apology alone: %+v", len(got), got)
			}
			m := sorry.FindStringSubmatch(got[0].HTML)
			if m == nil {
				t.Fatalf("answer = %q, want only the apology", got[0].HTML)
			}
			var record string
			for line := range strings.Lines(logs.String()) {
				if strings.Contains(line, "error_id="+m[1]) {
					record = line
				}
			}
			if !strings.Contains(record, tt.logged) {
				t.Errorf("log record of error %s = %q, want it to hold %q; log:\n%s", m[1], record, tt.logged, logs)
			}
		})
	}
}
