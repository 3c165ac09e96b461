package emulator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/gotd/td/tg"
)

// The saved state is a base snapshot (worldFile) and a journal (logFile)
// of one line per save since: a save writes what changed — the messages
// added since the last save and the older ones noted as changed
// (unsaved), each encoded once and kept, and the small state of every
// channel and user — without looking at the others, so that its cost does
// not grow with the history a long run piles up (the bot's benchmark
// sends thousands of messages, and rewriting all of them on every change
// cost more processor time than PostgreSQL). Once the journal outgrows
// the base, the next save writes a new base and empties the journal.
const (
	worldFile = "world.json"
	logFile   = "world.log"
	// minJournal is the journal's size below which it is never folded
	// into a new base.
	minJournal = 1 << 20
)

// persist returns once a snapshot holding change number change (0: none)
// is on disk, so that a call is answered only after its change is saved.
// Called without e.mu: the snapshot is encoded under it (it shares the
// world's maps) and written outside it, one at a time; a call whose change
// a later snapshot already holds writes nothing, so a burst of changes
// costs a few snapshots, not one each, and other calls are served while
// one is written.
func (e *Emulator) persist(change uint64) {
	if change == 0 {
		return
	}
	e.saveMu.Lock()
	defer e.saveMu.Unlock()
	if e.saved >= change {
		return
	}
	e.mu.Lock()
	base := e.baseNext || e.journalBytes >= max(e.baseBytes, minJournal)
	upTo := e.changes
	data, err := e.snapshotLocked(upTo, base)
	savedIDs := len(e.randomIDOrder)
	e.mu.Unlock()
	if err == nil {
		if base {
			err = e.writeBase(data)
		} else {
			err = e.appendJournal(data)
		}
	}
	if err != nil {
		// What the failed save held is marked saved (message.saved): only
		// a base is sure to hold it.
		e.baseNext = true
		e.log.Error("emulator: save state", "error", err)
		return
	}
	e.saved, e.baseNext, e.randomIDsSaved = upTo, false, savedIDs
}

// changeWorld changes the world outside a call (the test hooks): f runs
// under e.mu, and its change is saved before changeWorld returns.
func (e *Emulator) changeWorld(f func() error) error {
	e.mu.Lock()
	err := f()
	var change uint64
	if err == nil {
		e.changes++
		change = e.changes
	}
	e.mu.Unlock()
	e.persist(change)
	return err
}

// rememberRandomID records that the send key (randomKey) made message id.
// Called under e.mu.
func (e *Emulator) rememberRandomID(key string, id int) {
	e.randomIDs[key] = id
	e.randomIDOrder = append(e.randomIDOrder, key)
}

// snapshotLocked encodes the state to save, holding seq changes: every
// message with base, else the messages new or changed since the last save
// and the random ids remembered since. Each channel and user is written
// with its small state, and its messages spliced in from their kept
// encodings (message.saved). Called under e.mu.
func (e *Emulator) snapshotLocked(seq uint64, base bool) ([]byte, error) {
	var b bytes.Buffer
	head := snapshot{Seq: seq, RNG: e.rng.state, BotCommands: e.botCommands, RandomIDs: map[string]int{}}
	from := e.randomIDsSaved
	if base {
		from = 0
	}
	for _, k := range e.randomIDOrder[from:] {
		head.RandomIDs[k] = e.randomIDs[k]
	}
	for _, d := range e.docs {
		if d.uploaded {
			head.Docs = append(head.Docs, snapDocument{ID: d.id, Name: d.name, Mime: d.mime, Size: d.size, Path: d.path, Date: d.date, DC: d.dc})
		}
	}
	for _, p := range e.photos {
		if p.uploaded {
			head.Photos = append(head.Photos, snapPhoto{ID: p.id, Path: p.path, Size: p.size, W: p.w, H: p.h, Date: p.date, DC: p.dc})
		}
	}
	err := openObject(&b, head)
	b.WriteString(`,"channels":[`)
	for i, c := range slices.Collect(maps.Values(e.channels)) {
		sc := snapChannel{ID: c.id, Members: c.members}
		for id, r := range c.rights {
			if sc.Rights == nil {
				sc.Rights = map[int64][]byte{}
			}
			sc.Rights[id] = encodeRights(r)
		}
		err = errors.Join(err, writePart(&b, i, sc, "posts", c.unsaved.take(c.msgs, e.seeded[c.id], base), base))
	}
	b.WriteString(`],"users":[`)
	for i, u := range slices.Collect(maps.Values(e.users)) {
		su := snapUser{ID: u.id, Pts: u.pts, Qts: u.qts}
		for id := range u.blocked {
			su.Blocked = append(su.Blocked, id)
		}
		for _, ev := range u.qtsLog {
			su.QtsLog = append(su.QtsLog, snapParticipant{Qts: ev.Qts, Date: ev.Date, ChannelID: ev.ChannelID,
				ActorID: ev.ActorID, WasAdmin: ev.WasAdmin, Admin: ev.Admin, Rights: encodeRights(ev.Rights)})
		}
		err = errors.Join(err, writePart(&b, i, su, "box", u.unsaved.take(u.box, 0, base), base))
	}
	b.WriteString("]}")
	if err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// take returns the messages of msgs (from index first on: the ones
// before come from the seed) that a save writes — every one for a base,
// else the ones changed or added since the last save — and starts
// over: the next save writes what changes after this one. A failed save
// is followed by a base.
func (u *unsaved) take(msgs []*message, first int, base bool) []*message {
	if base {
		u.from, u.changed = first, nil
	}
	out := msgs[max(u.from, first):]
	var older []*message
	for _, m := range u.changed {
		if m.id > first {
			older = append(older, m)
		}
	}
	if older != nil {
		out = append(older, out...)
	}
	u.from, u.changed = len(msgs), nil
	return out
}

// note tells the next save that m, an older message (a save may have
// written it), changed: every change to a message after it was added
// must be noted, or a restart loses it.
func (u *unsaved) note(m *message) { u.changed = append(u.changed, m) }

// openObject writes v, a struct, as a JSON object left open for more
// fields ("{…" without its closing brace).
func openObject(b *bytes.Buffer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(data[:len(data)-1])
	return nil
}

// writePart writes the i-th channel or user (head, a struct without its
// messages) with msgs as its field named field: all of them with all, else
// those new or changed since they were last written.
func writePart(b *bytes.Buffer, i int, head any, field string, msgs []*message, all bool) error {
	if i > 0 {
		b.WriteByte(',')
	}
	err := openObject(b, head)
	b.WriteString(`,"` + field + `":[`)
	first := true
	for _, m := range msgs {
		data, changed, merr := m.savedJSON()
		if merr != nil {
			return merr
		}
		if !changed && !all {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.Write(data)
	}
	b.WriteString("]}")
	return err
}

// savedMessage is a message's saved form and what it was made from: the
// message's fields besides its entities and keyboard, and those two by
// identity (they are replaced, never changed in place).
type savedMessage struct {
	fields   messageFields
	entities []tg.MessageEntityClass
	markup   *tg.ReplyInlineMarkup
	json     []byte
}

// savedJSON returns the message's saved form (a snapMessage as JSON),
// encoding it again, and reporting it changed, only when the message is
// new or has changed since.
func (m *message) savedJSON() ([]byte, bool, error) {
	fields := fieldsOf(m)
	if s := m.saved; s != nil && s.fields == fields && s.markup == m.markup && sameEntities(s.entities, m.entities) {
		return s.json, false, nil
	}
	sm, err := toSnap(m)
	if err != nil {
		return nil, false, err
	}
	data, err := json.Marshal(sm)
	if err != nil {
		return nil, false, err
	}
	m.saved = &savedMessage{fields: fields, entities: m.entities, markup: m.markup, json: data}
	return data, true, nil
}

func sameEntities(a, b []tg.MessageEntityClass) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// writeBase replaces the base with data and empties the journal (a
// journal left by a crash in between holds lines the base holds already,
// which load skips by their Seq).
func (e *Emulator) writeBase(data []byte) error {
	tmp := filepath.Join(e.dir, worldFile+".tmp")
	err := os.WriteFile(tmp, data, 0o644)
	if err == nil {
		err = os.Rename(tmp, filepath.Join(e.dir, worldFile))
	}
	if err == nil {
		err = os.Truncate(filepath.Join(e.dir, logFile), 0)
		if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", worldFile, err)
	}
	e.baseBytes, e.journalBytes = int64(len(data)), 0
	return nil
}

// appendJournal adds data as a line of the journal.
func (e *Emulator) appendJournal(data []byte) error {
	f, err := os.OpenFile(filepath.Join(e.dir, logFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", logFile, err)
	}
	_, err = f.Write(append(data, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", logFile, err)
	}
	e.journalBytes += int64(len(data)) + 1
	return nil
}

// load applies the saved base and then the journal's newer lines on top
// of the freshly built seed world. A last line cut short (a crash while
// it was written) is dropped. Changes go on from the number the state
// holds (so that a journal line of this run is never mistaken for one a
// base holds), and the next save writes a new base.
func (e *Emulator) load() error {
	seq, err := e.loadSaved()
	e.changes, e.saved, e.baseNext = seq, seq, true
	return err
}

// loadSaved is load without its bookkeeping; it returns the number of
// changes the state holds.
func (e *Emulator) loadSaved() (uint64, error) {
	snaps, err := readSaved(e.dir, func(line int) {
		e.log.Warn("emulator: the saved journal's last line was cut short; dropping it", "line", line)
	})
	var seq uint64
	for _, snap := range snaps {
		if aerr := e.apply(snap.snapshot); aerr != nil {
			return seq, fmt.Errorf("%s: %w", snap.where, aerr)
		}
		seq = snap.Seq
	}
	return seq, err
}

// savedSnapshot is a base or a journal line as read, with where it is.
type savedSnapshot struct {
	snapshot
	where string
}

// readSaved reads the saved state in dir: the base, if any, and the
// journal's lines newer than it, in order; cut is told of a last line cut
// short (a crash while it was written), which is dropped.
func readSaved(dir string, cut func(line int)) ([]savedSnapshot, error) {
	var out []savedSnapshot
	var seq uint64
	data, err := os.ReadFile(filepath.Join(dir, worldFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		var snap snapshot
		if err := json.Unmarshal(data, &snap); err != nil {
			return nil, fmt.Errorf("%s: %w", worldFile, err)
		}
		out, seq = append(out, savedSnapshot{snap, worldFile}), snap.Seq
	}
	f, err := os.Open(filepath.Join(dir, logFile))
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	} else if err != nil {
		return out, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			if len(line) > 0 {
				cut(n)
			}
			return out, nil
		} else if err != nil {
			return out, err
		}
		var snap snapshot
		if err := json.Unmarshal(line, &snap); err != nil {
			return out, fmt.Errorf("%s line %d: %w", logFile, n, err)
		}
		if snap.Seq <= seq {
			continue // the base holds it
		}
		out, seq = append(out, savedSnapshot{snap, fmt.Sprintf("%s line %d", logFile, n)}), snap.Seq
	}
}

// SavedPosts counts the posts an emulator's saved state in dir holds
// beyond the seed's, in every channel together (the emulator should have
// stopped): for tests that check what was published.
func SavedPosts(dir string) (int, error) {
	snaps, err := readSaved(dir, func(int) {})
	if err != nil {
		return 0, err
	}
	posts := map[[2]int64]bool{}
	for _, snap := range snaps {
		for _, c := range snap.Channels {
			for _, m := range c.Posts {
				posts[[2]int64{c.ID, int64(m.ID)}] = true
			}
		}
	}
	return len(posts), nil
}

// apply applies a base or a journal line: the small state it holds
// replaces the world's, its messages replace those with their ids or come
// next, and its random ids and uploads are added.
func (e *Emulator) apply(snap snapshot) error {
	e.rng.state = snap.RNG
	for k, id := range snap.RandomIDs {
		e.rememberRandomID(k, id)
	}
	e.botCommands = snap.BotCommands
	for _, d := range snap.Docs {
		e.docs[d.ID] = &document{id: d.ID, name: d.Name, mime: d.Mime, size: d.Size, path: d.Path, date: d.Date, dc: savedDC(d.DC), uploaded: true}
	}
	for _, p := range snap.Photos {
		e.photos[p.ID] = &photo{id: p.ID, path: p.Path, size: p.Size, w: p.W, h: p.H, date: p.Date, dc: savedDC(p.DC), uploaded: true}
	}
	for _, sc := range snap.Channels {
		if err := e.applyChannel(sc); err != nil {
			return err
		}
	}
	for _, su := range snap.Users {
		if err := e.applyUser(su); err != nil {
			return err
		}
	}
	return nil
}

func (e *Emulator) applyChannel(sc snapChannel) error {
	c := e.channels[sc.ID]
	if c == nil {
		return fmt.Errorf("channel %d is not in the seed (seed changed? remove the state directory)", sc.ID)
	}
	c.members = sc.Members
	if c.members == nil {
		c.members = map[int64]role{}
	}
	c.rights = map[int64]tg.ChatAdminRights{}
	for id, raw := range sc.Rights {
		r, err := decodeRights(raw)
		if err != nil {
			return fmt.Errorf("channel %d: rights: %w", c.id, err)
		}
		c.rights[id] = r
	}
	var err error
	c.msgs, err = applyMessages(c.msgs, sc.Posts, fmt.Sprintf("channel %d", c.id))
	if n := len(c.msgs); n > 0 {
		c.pts = max(c.pts, c.msgs[n-1].pts)
	}
	return err
}

func (e *Emulator) applyUser(su snapUser) error {
	u := e.users[su.ID]
	if u == nil {
		return fmt.Errorf("user %d is not in the seed", su.ID)
	}
	var err error
	if u.box, err = applyMessages(u.box, su.Box, fmt.Sprintf("user %d", u.id)); err != nil {
		return err
	}
	if n := len(u.box); n > 0 {
		u.pts = max(u.pts, u.box[n-1].pts)
	}
	u.pts = max(u.pts, su.Pts)
	u.qts = su.Qts
	u.blocked = map[int64]bool{}
	for _, id := range su.Blocked {
		u.blocked[id] = true
	}
	u.qtsLog = nil
	for _, sp := range su.QtsLog {
		r, err := decodeRights(sp.Rights)
		if err != nil {
			return fmt.Errorf("user %d: qts event: %w", u.id, err)
		}
		u.qtsLog = append(u.qtsLog, &participantEvent{Qts: sp.Qts, Date: sp.Date, ChannelID: sp.ChannelID,
			ActorID: sp.ActorID, WasAdmin: sp.WasAdmin, Admin: sp.Admin, Rights: r})
	}
	return nil
}

// applyMessages puts saved messages into msgs (ids from 1): a message
// replaces the one with its id, or comes right after the last.
func applyMessages(msgs []*message, saved []snapMessage, where string) ([]*message, error) {
	for _, sm := range saved {
		m, err := fromSnap(sm)
		if err != nil {
			return msgs, fmt.Errorf("%s: %w", where, err)
		}
		switch {
		case m.id >= 1 && m.id <= len(msgs):
			msgs[m.id-1] = m
		case m.id == len(msgs)+1:
			msgs = append(msgs, m)
		default:
			return msgs, fmt.Errorf("%s: message %d out of order", where, m.id)
		}
	}
	return msgs, nil
}
