package emulator

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/gotd/td/telegram/message/markup"
	"github.com/gotd/td/tg"
)

// TestSnapshotsFollowChanges checks that the saved state holds every
// message as toSnap encodes it after each kind of change — including the
// messages whose saved form snapshotLocked kept from an earlier snapshot,
// which must be encoded again once they change.
func TestSnapshotsFollowChanges(t *testing.T) {
	e := testEmulator(t, false)
	var u *user
	for _, x := range e.users {
		u = x
	}
	var c *channel
	for _, x := range e.channels {
		c = x
	}
	keyboard := func(label string) *tg.ReplyInlineMarkup {
		return &tg.ReplyInlineMarkup{Rows: []tg.KeyboardInlineButtonRow{{Buttons: []tg.KeyboardInlineButton{
			markup.Callback(label, []byte(label))}}}}
	}
	bold := []tg.MessageEntityClass{&tg.MessageEntityBold{Offset: 0, Length: 4}}
	var reply, post *message
	steps := []struct {
		name   string
		change func()
	}{
		{"new messages", func() {
			e.appendPrivate(u, &message{date: 100, from: u.id, peer: u.id, text: "/search dragon"})
			reply = e.appendPrivate(u, &message{date: 101, peer: u.id, text: "Page 1", entities: bold, markup: keyboard("next")})
			post = e.appendMessage(c, &message{date: 102, text: "a post"})
		}},
		{"nothing", func() {}},
		{"an edit of text, entities and keyboard", func() {
			e.editPrivate(u, u, reply, "Page 2", []tg.MessageEntityClass{&tg.MessageEntityItalic{Offset: 1, Length: 3}}, keyboard("prev"))
		}},
		{"a keyboard removed", func() { e.editPrivate(u, u, reply, "Page 2", reply.entities, nil) }},
		{"a deleted post", func() { post.deleted = true }},
		{"a twin set", func() { reply.twin = 7 }},
	}
	for _, s := range steps {
		e.mu.Lock()
		s.change()
		data, err := e.snapshotLocked(e.changes, true)
		want := wantSaved(t, e)
		e.mu.Unlock()
		if err != nil {
			t.Fatalf("after %s: the snapshot failed: %v", s.name, err)
		}
		var got snapshot
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatalf("after %s: the snapshot is not JSON: %v\n%s", s.name, err, data)
		}
		if saved := savedMessages(got); !reflect.DeepEqual(saved, want) {
			t.Fatalf("after %s: saved messages\n%+v\nwant\n%+v", s.name, saved, want)
		}
		if got.RNG != e.rng.state {
			t.Fatalf("after %s: saved rng %d, want %d", s.name, got.RNG, e.rng.state)
		}
	}
}

// savedMessages are the messages of a snapshot by box ("u" or "c" and the
// owner's id; empty boxes left out).
func savedMessages(s snapshot) map[string][]snapMessage {
	out := map[string][]snapMessage{}
	for _, c := range s.Channels {
		if len(c.Posts) > 0 {
			out["c"+itoa(c.ID)] = c.Posts
		}
	}
	for _, u := range s.Users {
		if len(u.Box) > 0 {
			out["u"+itoa(u.ID)] = u.Box
		}
	}
	return out
}

// wantSaved encodes every message to save the plain way. Called under e.mu.
func wantSaved(t *testing.T, e *Emulator) map[string][]snapMessage {
	t.Helper()
	out := map[string][]snapMessage{}
	encode := func(msgs []*message) []snapMessage {
		var list []snapMessage
		for _, m := range msgs {
			sm, err := toSnap(m)
			if err != nil {
				t.Fatal(err)
			}
			list = append(list, sm)
		}
		return list
	}
	for _, c := range e.channels {
		if posts := encode(c.msgs[e.seeded[c.id]:]); posts != nil {
			out["c"+itoa(c.id)] = posts
		}
	}
	for _, u := range e.users {
		if box := encode(u.box); box != nil {
			out["u"+itoa(u.id)] = box
		}
	}
	return out
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// TestSavedStateReloads checks that an emulator started on a state
// directory rebuilds the world the last one saved: from a journal alone,
// from a base and the journal after it, with a last line cut short by a
// crash (dropped), and with a journal a newer base holds already (a crash
// between writing the base and emptying the journal).
func TestSavedStateReloads(t *testing.T) {
	seed := `{"account": {"phone": "+15550000001"}, "channels": [{"title": "A", "joined": true, "posts": [{"file": "files/a.zip"}]}]}`
	files := writeFiles(t)
	key, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	start := func(dir string) *Emulator {
		t.Helper()
		s, err := ParseSeed([]byte(seed), files)
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(Options{Seed: s, Key: key, StateDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	first := func(e *Emulator) *user {
		for _, u := range e.users {
			return u
		}
		return nil
	}
	say := func(e *Emulator, text string) {
		t.Helper()
		must(t, e.changeWorld(func() error {
			u := first(e)
			m := e.appendPrivate(u, &message{date: 100, from: u.id, peer: u.id, text: text})
			e.rememberRandomID(randomKey(u, int64(m.id)), m.id)
			return nil
		}))
	}
	world := func(e *Emulator) savedWorld {
		e.mu.Lock()
		defer e.mu.Unlock()
		return savedWorld{Messages: wantSaved(t, e), RandomIDs: e.randomIDs, RNG: e.rng.state, Pts: first(e).pts}
	}
	check := func(name, dir string, want savedWorld) *Emulator {
		t.Helper()
		e := start(dir)
		if got := world(e); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: reloaded\n%+v\nwant\n%+v", name, got, want)
		}
		return e
	}

	dir := t.TempDir()
	e := start(dir)
	say(e, "one")
	say(e, "two")
	e = check("a journal alone", dir, world(e))
	say(e, "three") // the first save after a start writes a base
	must(t, e.changeWorld(func() error {
		for _, c := range e.channels {
			e.appendMessage(c, &message{date: 100, text: "post"})
		}
		return nil
	}))
	// Messages a save wrote, changed: they are saved again.
	must(t, e.changeWorld(func() error {
		u := first(e)
		e.editPrivate(u, u, u.box[1], "two, first edit", nil, nil)
		for _, c := range e.channels {
			c.deletePost(len(c.msgs))
		}
		return nil
	}))
	say(e, "four")
	want := world(e)
	check("a base and its journal", dir, want)

	journal := filepath.Join(dir, logFile)
	f, err := os.OpenFile(journal, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(`{"seq":999,"rng":1,"users":[{"id":`)
	must(t, err)
	must(t, f.Close())
	e = check("a last line cut short", dir, want)

	stale, err := os.ReadFile(journal)
	must(t, err)
	// A new base (the first save after a start), then the journal
	// emptied; the stale journal's lines would undo the edit.
	must(t, e.changeWorld(func() error { first(e).box[1].text = "two, edited"; return nil }))
	want = world(e)
	must(t, os.WriteFile(journal, stale, 0o644))
	check("a journal the base holds already", dir, want)
}

// savedWorld is what TestSavedStateReloads compares.
type savedWorld struct {
	Messages  map[string][]snapMessage
	RandomIDs map[string]int
	RNG       uint64
	Pts       int
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
