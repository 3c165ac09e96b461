package messengertest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hoard/hoard/messenger"
)

// historySeed writes a seed of a plain channel of n text posts and a forum
// whose General topic and topic "Big" take turns, 60 posts each.
func historySeed(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	posts := make([]map[string]any, n)
	for i := range posts {
		posts[i] = map[string]any{"text": fmt.Sprintf("post %d", i)}
	}
	general := make([]map[string]any, 60)
	big := make([]map[string]any, 60)
	for i := range general {
		general[i] = map[string]any{"text": fmt.Sprintf("general %d", i)}
		big[i] = map[string]any{"text": fmt.Sprintf("big %d", i)}
	}
	seed := map[string]any{
		"account":     map[string]any{"phone": "+15550000001"},
		"destination": map[string]any{"title": "Hoard Archive", "username": "hoardarchive"},
		"channels": []any{
			map[string]any{"title": "Pages", "username": "pages", "joined": true, "posts": posts},
			map[string]any{"title": "Board", "username": "board", "joined": true, "forum": true, "posts": general,
				"topics": []any{map[string]any{"title": "Big", "posts": big}}},
		},
	}
	data, err := json.Marshal(seed)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHistoryPage reads histories oldest first through the real client:
// each page the oldest messages after the watermark, Last the newest id it
// covered (service messages and, for General, the other topics' messages
// included), More while the page was full.
func TestHistoryPage(t *testing.T) {
	t.Parallel()
	env := Start(t, historySeed(t, 250))
	acc := env.Account(t, env.Config("account"))
	ctx := ctxT(t)
	pages := mustResolve(t, acc, "@pages")
	board := mustResolve(t, acc, "@board")
	topics, err := acc.Topics(ctx, board)
	if err != nil || len(topics) != 2 {
		t.Fatalf("topics %v, %v", topics, err)
	}
	big := topics[1].ID
	// The board's ids: 1 its creation (General's root), 2…61 General's
	// posts, 62 Big's root, 63…122 Big's posts.
	tests := []struct {
		name  string
		ch    messenger.Channel
		q     messenger.HistoryQuery
		first int // first and last message id of the page, 0 when empty
		last  int
		n     int
		page  messenger.HistoryPage
	}{
		{name: "from the start: the creation left out", ch: pages, q: messenger.HistoryQuery{},
			first: 2, last: 100, n: 99, page: messenger.HistoryPage{Last: 100, More: true}},
		{name: "after a watermark", ch: pages, q: messenger.HistoryQuery{AfterID: 100},
			first: 101, last: 200, n: 100, page: messenger.HistoryPage{Last: 200, More: true}},
		{name: "the short last page", ch: pages, q: messenger.HistoryQuery{AfterID: 200},
			first: 201, last: 251, n: 51, page: messenger.HistoryPage{Last: 251}},
		{name: "nothing new", ch: pages, q: messenger.HistoryQuery{AfterID: 251}, page: messenger.HistoryPage{Last: 251}},
		{name: "General: the other topic's messages left out but covered", ch: board, q: messenger.HistoryQuery{TopicID: messenger.GeneralTopicID, AfterID: 40},
			first: 41, last: 61, n: 21, page: messenger.HistoryPage{Last: 122}},
		{name: "a topic", ch: board, q: messenger.HistoryQuery{TopicID: big, AfterID: 100},
			first: 101, last: 122, n: 22, page: messenger.HistoryPage{Last: 122}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := acc.HistoryPage(ctx, tt.ch, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			first, last := 0, 0
			for i, m := range got.Messages {
				if i > 0 && m.ID <= got.Messages[i-1].ID {
					t.Fatalf("messages out of order at %d: %d after %d", i, m.ID, got.Messages[i-1].ID)
				}
			}
			if len(got.Messages) > 0 {
				first, last = got.Messages[0].ID, got.Messages[len(got.Messages)-1].ID
			}
			n := len(got.Messages)
			got.Messages = nil
			if fmt.Sprint(first, last, n, got) != fmt.Sprint(tt.first, tt.last, tt.n, tt.page) {
				t.Fatalf("first, last, count, page = %d %d %d %+v; want %d %d %d %+v", first, last, n, got, tt.first, tt.last, tt.n, tt.page)
			}
		})
	}
}

// TestHistoryPageFlood reads a long history faster than the platform
// lets an account: the 31st page in a 30 s window comes back as a
// *messenger.FloodWait of the window's rest, which the client does not
// sleep through when it is longer than its inline limit.
func TestHistoryPageFlood(t *testing.T) {
	t.Parallel()
	env := Start(t, historySeed(t, 3100))
	cfg := env.Config("account")
	cfg.MaxInlineFloodWait = time.Second
	acc := env.Account(t, cfg)
	ctx := ctxT(t)
	ch := mustResolve(t, acc, "@pages")
	var after int
	for page := 1; page <= 30; page++ {
		got, err := acc.HistoryPage(ctx, ch, messenger.HistoryQuery{AfterID: after})
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		after = got.Last
	}
	_, err := acc.HistoryPage(ctx, ch, messenger.HistoryQuery{AfterID: after})
	fw, ok := messenger.AsFloodWait(err)
	if !ok || fw.Method != "messages.getHistory" || fw.RetryAfter < 20*time.Second || fw.RetryAfter > 30*time.Second {
		t.Fatalf("page 31: %v (%+v), want a FLOOD_WAIT of messages.getHistory for the window's rest (20–30 s)", err, fw)
	}
	if got := env.Emu.UserFloodWaits(); got["messages.getHistory"] != 1 {
		t.Fatalf("the emulator answered %v flood waits, want 1 of messages.getHistory", got)
	}
}

// mustResolve resolves a channel reference or fails the test.
func mustResolve(t *testing.T, acc messenger.Account, ref string) messenger.Channel {
	t.Helper()
	ch, err := acc.ResolveChannel(ctxT(t), mustRef(t, ref))
	if err != nil {
		t.Fatalf("resolve %s: %v", ref, err)
	}
	return ch
}
