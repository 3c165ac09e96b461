package emulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/gotd/td/bin"
	"github.com/gotd/td/tg"
	"github.com/gotd/td/tgerr"
)

// The flood model of user accounts (bots have their own, bot.go). The
// platform answers FLOOD_WAIT_X to an account that reads too much too
// fast; users report it for history reads after about 3,000 messages
// (30 requests of 100) in 30 s, with waits of 20–30 s. The model keeps,
// per account and per kind of call, a fixed window that opens with the
// first call: Budget units fit in it; past them every call is answered
// FLOOD_WAIT_X, X the seconds until the window closes, and spends
// nothing. Evidence per rule in userFloodRules; notes/telegram.md §11.

// UserFlood configures the user flood model. The zero value is the
// platform's: on, with its windows.
type UserFlood struct {
	// Off switches the model off (benchmarks that measure something
	// else).
	Off bool
	// Scale multiplies every window; 0 means 1. Tests lower it to keep
	// runs short: the budgets stay, so the number of flood waits a
	// client meets stays that of the platform. A wait is at least
	// FLOOD_WAIT_1: the platform counts it in whole seconds.
	Scale float64
}

// UnmarshalJSON reads the seed's "flood": false switches the model off,
// true keeps the platform's, and an object {"scale": S} scales its
// windows.
func (f *UserFlood) UnmarshalJSON(data []byte) error {
	switch strings.TrimSpace(string(data)) {
	case "false":
		*f = UserFlood{Off: true}
		return nil
	case "true", "null":
		*f = UserFlood{}
		return nil
	}
	var v struct {
		Scale *float64 `json:"scale"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("flood: want false, true or {\"scale\": S}: %w", err)
	}
	if v.Scale == nil || *v.Scale <= 0 || *v.Scale > 100 || math.IsNaN(*v.Scale) {
		return errors.New("flood: scale must be above 0 and at most 100")
	}
	*f = UserFlood{Scale: *v.Scale}
	return nil
}

// MarshalJSON writes f as UnmarshalJSON reads it.
func (f UserFlood) MarshalJSON() ([]byte, error) {
	switch {
	case f.Off:
		return []byte("false"), nil
	case f.Scale == 0 || f.Scale == 1:
		return []byte("true"), nil
	}
	return json.Marshal(map[string]float64{"scale": f.Scale})
}

// floodRule limits one kind of call of a user account: at most budget
// units per window. Methods that name the same bucket share its budget;
// cost is the units a call takes (nil: one).
type floodRule struct {
	bucket string
	budget int
	window time.Duration
	cost   func(bin.Object) int
}

// userFloodRules are the platform's limits as clients have met them.
var userFloodRules = map[string]floodRule{
	// Telethon PR #565: "limit for getHistory requests seems to be 3000
	// messages within 30 seconds"; Telethon's iter_messages sleeps 1 s
	// between requests of 100 past 3,000 messages. Waits seen:
	// FLOOD_WAIT_26 (MadelineProto #176), 25 and 30 on getChatHistory
	// (tdlib #2286, #743).
	"messages.getHistory": {bucket: "messages.getHistory", budget: 30, window: 30 * time.Second},
	// A thread's history: no separate reports; a history read.
	"messages.getReplies": {bucket: "messages.getReplies", budget: 30, window: 30 * time.Second},
	// messages.Search waits of 3–21 s while paging 40,000 messages
	// (gurland/telegram-delete-all-messages #21, #25).
	"messages.search": {bucket: "messages.search", budget: 30, window: 30 * time.Second},
	// No reports; modelled on the history reads it pages like.
	"messages.getForumTopics": {bucket: "messages.getForumTopics", budget: 30, window: 30 * time.Second},
	// Telethon's get_messages by id: "30s flood wait every 300 messages
	// (3 requests of 100 each, 30 of 10, etc.)": the ids count.
	"channels.getMessages": {bucket: "channels.getMessages", budget: 300, window: 30 * time.Second,
		cost: func(obj bin.Object) int { return len(obj.(*tg.ChannelsGetMessagesRequest).ID) }},
	// Waits of 23–421 s after bursts of resolves, escalating to 15–18 h
	// after about 1,400 (tg_content_factory #551 believes ~30 a minute
	// is safe; kurigram #100, MuskEmpireBot #28).
	"contacts.resolveUsername": {bucket: "contacts.resolveUsername", budget: 30, window: time.Minute},
	// Joins, by username or invite, are one action: 348 s after a burst
	// (DropWizard #2), ~70,000 s after joining ~200 groups in an hour
	// (TelegramShillBot #30).
	"channels.joinChannel":      {bucket: "joins", budget: 20, window: time.Hour},
	"messages.importChatInvite": {bucket: "joins", budget: 20, window: time.Hour},
}

// userFloodState is the model's bookkeeping: the open window per account
// and bucket, and the flood waits answered per method. Guarded by e.mu.
type userFloodState struct {
	model   UserFlood
	windows map[floodKey]*floodWindow
	waits   map[string]int
	// now is the model's clock (tests replace it).
	now func() time.Time
}

type floodKey struct {
	user   int64
	bucket string
}

// floodWindow is an open window: it closes at end, used units spent.
type floodWindow struct {
	end  time.Time
	used int
}

// floods returns the model's state, made on first use from the options
// (or the seed). Called under e.mu.
func (e *Emulator) floods() *userFloodState {
	if e.uflood == nil {
		model := UserFlood{}
		switch {
		case e.opts.UserFlood != nil:
			model = *e.opts.UserFlood
		case e.opts.Seed.Flood != nil:
			model = *e.opts.Seed.Flood
		}
		e.uflood = &userFloodState{model: model, windows: map[floodKey]*floodWindow{}, waits: map[string]int{}, now: time.Now}
	}
	return e.uflood
}

// userFlood spends what the call takes of its account's budget, or
// answers FLOOD_WAIT_X when the budget of the open window is spent (the
// call then spends nothing). Bots, calls before sign-in and methods
// without a rule pass.
func (e *Emulator) userFlood(c *call, obj bin.Object) error {
	rule, ok := userFloodRules[c.method]
	if !ok || c.user == nil || c.user.bot {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.floods()
	if st.model.Off {
		return nil
	}
	cost := 1
	if rule.cost != nil {
		cost = max(rule.cost(obj), 1)
	}
	now := st.now()
	k := floodKey{user: c.user.id, bucket: rule.bucket}
	w := st.windows[k]
	if w == nil || !now.Before(w.end) {
		w = &floodWindow{end: now.Add(st.scaled(rule.window))}
		st.windows[k] = w
	}
	// A call bigger than a whole budget still fits an empty window.
	if w.used > 0 && w.used+cost > rule.budget {
		wait := max(1, int(math.Ceil(w.end.Sub(now).Seconds())))
		st.waits[c.method]++
		e.log.Info("emulator: user flood model tripped", "method", c.method, "user", c.user.id, "wait", wait)
		return tgerr.New(420, fmt.Sprintf("FLOOD_WAIT_%d", wait))
	}
	w.used += cost
	return nil
}

// scaled is a window of the rules under the model's scale.
func (st *userFloodState) scaled(d time.Duration) time.Duration {
	if st.model.Scale <= 0 {
		return d
	}
	return time.Duration(float64(d) * st.model.Scale)
}

// SetUserFlood replaces the user flood model (UserFlood{Off: true}
// switches it off) and closes every open window.
func (e *Emulator) SetUserFlood(f UserFlood) {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.floods()
	st.model = f
	st.windows = map[floodKey]*floodWindow{}
}

// UserFloodWaits returns how many FLOOD_WAITs the user flood model
// answered, per method.
func (e *Emulator) UserFloodWaits() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.floods().waits)
}
