package emulator

import (
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gotd/td/bin"
	"github.com/gotd/td/tg"
)

// floodStep is one call of a flood scenario: at (after the first call),
// method with ids (channels.getMessages) by the account, or by the bot.
type floodStep struct {
	at     time.Duration
	method string
	ids    int
	bot    bool
	times  int // the same call this many times (default 1)
}

// runFlood plays steps on an emulator with model f and a clock under the
// test's control; each answer is "" or the error's name, and repeated
// answers are folded as "answer×n".
func runFlood(t *testing.T, f *UserFlood, steps []floodStep) []string {
	t.Helper()
	e := testEmulator(t, false)
	bot := &user{id: 777, bot: true}
	if f != nil {
		e.SetUserFlood(*f)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var clock time.Time
	e.mu.Lock()
	e.floods().now = func() time.Time { return clock }
	e.mu.Unlock()
	var out []string
	for _, s := range steps {
		clock = start.Add(s.at)
		u := e.account
		if s.bot {
			u = bot
		}
		var obj bin.Object = &tg.MessagesGetHistoryRequest{}
		if s.ids > 0 {
			in := make([]tg.InputMessageClass, s.ids)
			for i := range in {
				in[i] = &tg.InputMessageID{ID: i + 1}
			}
			obj = &tg.ChannelsGetMessagesRequest{ID: in}
		}
		last, n := "", 0
		for range max(s.times, 1) {
			got := rpcType(e.userFlood(&call{e: e, user: u, method: s.method}, obj))
			if n > 0 && got != last {
				out = append(out, fold(last, n))
				n = 0
			}
			last = got
			n++
		}
		out = append(out, fold(last, n))
	}
	return out
}

func fold(answer string, n int) string {
	if answer == "" {
		answer = "ok"
	}
	if n == 1 {
		return answer
	}
	return fmt.Sprintf("%s×%d", answer, n)
}

func TestUserFlood(t *testing.T) {
	const hist = "messages.getHistory"
	tests := []struct {
		name  string
		flood *UserFlood
		steps []floodStep
		want  []string
	}{
		{"history: 30 pages in a window, then the rest of the window to wait", nil,
			[]floodStep{{at: 0, method: hist, times: 30}, {at: 3200 * time.Millisecond, method: hist}},
			[]string{"ok×30", "FLOOD_WAIT_27"}},
		{"a refused call spends nothing: the window still opens on time", nil,
			[]floodStep{{at: 0, method: hist, times: 30}, {at: time.Second, method: hist, times: 5},
				{at: 29500 * time.Millisecond, method: hist}, {at: 30 * time.Second, method: hist, times: 31}},
			[]string{"ok×30", "FLOOD_WAIT_29×5", "FLOOD_WAIT_1", "ok×30", "FLOOD_WAIT_30"}},
		{"each method has its own budget", nil,
			[]floodStep{{at: 0, method: hist, times: 30}, {at: 0, method: "messages.getReplies", times: 30},
				{at: 0, method: "messages.search"}, {at: 0, method: "messages.getForumTopics"}, {at: 0, method: hist}},
			[]string{"ok×30", "ok×30", "ok", "ok", "FLOOD_WAIT_30"}},
		{"getMessages counts ids: 300 a window", nil,
			[]floodStep{{at: 0, method: "channels.getMessages", ids: 100, times: 3}, {at: time.Second, method: "channels.getMessages", ids: 1},
				{at: 30 * time.Second, method: "channels.getMessages", ids: 1, times: 300}, {at: 30 * time.Second, method: "channels.getMessages", ids: 1}},
			[]string{"ok×3", "FLOOD_WAIT_29", "ok×300", "FLOOD_WAIT_30"}},
		{"joins by username and by invite share one budget", nil,
			[]floodStep{{at: 0, method: "channels.joinChannel", times: 20}, {at: time.Minute, method: "messages.importChatInvite"}},
			[]string{"ok×20", "FLOOD_WAIT_3540"}},
		{"resolves: 30 a minute", nil,
			[]floodStep{{at: 0, method: "contacts.resolveUsername", times: 30}, {at: 10 * time.Second, method: "contacts.resolveUsername"}},
			[]string{"ok×30", "FLOOD_WAIT_50"}},
		{"bots and other methods are not this model's", nil,
			[]floodStep{{at: 0, method: hist, bot: true, times: 100}, {at: 0, method: "upload.getFile", times: 100}},
			[]string{"ok×100", "ok×100"}},
		{"off", &UserFlood{Off: true},
			[]floodStep{{at: 0, method: hist, times: 1000}},
			[]string{"ok×1000"}},
		{"scaled windows keep the budget", &UserFlood{Scale: 0.1},
			[]floodStep{{at: 0, method: hist, times: 30}, {at: 500 * time.Millisecond, method: hist}, {at: 3 * time.Second, method: hist, times: 30}},
			[]string{"ok×30", "FLOOD_WAIT_3", "ok×30"}},
		{"a wait is one second at least", &UserFlood{Scale: 0.01},
			[]floodStep{{at: 0, method: hist, times: 31}, {at: 300 * time.Millisecond, method: hist}},
			[]string{"ok×30", "FLOOD_WAIT_1", "ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runFlood(t, tt.flood, tt.steps)
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Fatalf("answers\n got  %q\n want %q", got, tt.want)
			}
		})
	}
}

func TestUserFloodWaitsCounted(t *testing.T) {
	e := testEmulator(t, false)
	c := &call{e: e, user: e.account, method: "messages.search"}
	for range 33 {
		_ = e.userFlood(c, &tg.MessagesSearchRequest{})
	}
	if got := e.UserFloodWaits(); len(got) != 1 || got["messages.search"] != 3 {
		t.Fatalf("flood waits = %v, want 3 of messages.search", got)
	}
}

func TestUserFloodJSON(t *testing.T) {
	tests := []struct {
		in      string
		want    UserFlood
		wantErr string
	}{
		{in: `false`, want: UserFlood{Off: true}},
		{in: `true`, want: UserFlood{}},
		{in: `{"scale": 0.05}`, want: UserFlood{Scale: 0.05}},
		{in: `{"scale": 0}`, wantErr: "scale must be above 0"},
		{in: `{}`, wantErr: "scale must be above 0"},
		{in: `{"scale": 1, "budget": 3}`, wantErr: "unknown field"},
		{in: `"off"`, wantErr: "want false, true or"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got UserFlood
			err := json.Unmarshal([]byte(tt.in), &got)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
			back, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			var again UserFlood
			if err := json.Unmarshal(back, &again); err != nil || again != got {
				t.Fatalf("round trip %s: %+v, %v", back, again, err)
			}
		})
	}
}

// TestSeedFloodSwitch checks the seed's "flood" reaches the model, and that
// Options.UserFlood wins over it.
func TestSeedFloodSwitch(t *testing.T) {
	dir := writeFiles(t)
	tests := []struct {
		name string
		seed string
		opts *UserFlood
		want UserFlood
	}{
		{"absent: the platform's", ``, nil, UserFlood{}},
		{"off", `, "flood": false`, nil, UserFlood{Off: true}},
		{"scaled", `, "flood": {"scale": 0.5}`, nil, UserFlood{Scale: 0.5}},
		{"options win", `, "flood": false`, &UserFlood{Scale: 0.2}, UserFlood{Scale: 0.2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSeed([]byte(`{"account": {"phone": "+15550000001"}`+tt.seed+`}`), dir)
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(Options{Seed: s, Key: sharedTestKey(t), UserFlood: tt.opts})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = e.Close() })
			e.mu.Lock()
			got := e.floods().model
			e.mu.Unlock()
			if got != tt.want {
				t.Fatalf("model = %+v, want %+v", got, tt.want)
			}
		})
	}
}

var testKey struct {
	once sync.Once
	key  *rsa.PrivateKey
	err  error
}

// sharedTestKey is one server key for the tests that need no other.
func sharedTestKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	testKey.once.Do(func() { testKey.key, testKey.err = GenerateKey() })
	if testKey.err != nil {
		t.Fatal(testKey.err)
	}
	return testKey.key
}
