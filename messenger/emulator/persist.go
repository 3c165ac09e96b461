package emulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gotd/td/bin"
	"github.com/gotd/td/tg"
)

// State persistence: the seed rebuilds the same world (ids are
// deterministic), so only what happened since is saved — memberships, new
// channel posts, private messages, uploaded documents and photos and the id
// generator — to StateDir/world.json after every change. Auth keys live
// inside tgtest and are not persisted: after a restart clients sign in again.

const worldFile = "world.json"

type snapshot struct {
	RNG      uint64         `json:"rng"`
	Channels []snapChannel  `json:"channels"`
	Users    []snapUser     `json:"users"`
	Docs     []snapDocument `json:"documents"`
	Photos   []snapPhoto    `json:"photos"`
	// RandomIDs are the random ids of sends ("sender/random id" → message
	// id): a retry after a restart must not deliver twice either.
	RandomIDs   map[string]int `json:"random_ids,omitempty"`
	BotCommands []BotCommand   `json:"bot_commands,omitempty"`
}

type snapChannel struct {
	ID      int64          `json:"id"`
	Members map[int64]role `json:"members"`
	// Rights of administrators made by channels.editAdmin, TL-encoded.
	Rights map[int64][]byte `json:"rights,omitempty"`
	Posts  []snapMessage    `json:"posts"` // after the seeded ones
}

type snapUser struct {
	ID  int64         `json:"id"`
	Box []snapMessage `json:"box"`
	// Pts is the box's pts (edits raise it past the last message's).
	Pts     int               `json:"pts,omitempty"`
	Qts     int               `json:"qts,omitempty"`
	QtsLog  []snapParticipant `json:"qts_log,omitempty"`
	Blocked []int64           `json:"blocked,omitempty"`
}

type snapParticipant struct {
	Qts       int    `json:"qts"`
	Date      int    `json:"date"`
	ChannelID int64  `json:"channel_id"`
	ActorID   int64  `json:"actor_id"`
	WasAdmin  bool   `json:"was_admin,omitempty"`
	Admin     bool   `json:"admin,omitempty"`
	Rights    []byte `json:"rights,omitempty"` // TL-encoded
}

type snapMessage struct {
	ID        int      `json:"id"`
	Date      int      `json:"date"`
	From      int64    `json:"from,omitempty"`
	Peer      int64    `json:"peer,omitempty"`
	Out       bool     `json:"out,omitempty"`
	Text      string   `json:"text,omitempty"`
	Entities  [][]byte `json:"entities,omitempty"` // TL-encoded
	Doc       int64    `json:"doc,omitempty"`
	Photo     int64    `json:"photo,omitempty"`
	GroupedID int64    `json:"grouped_id,omitempty"`
	ReplyTo   int      `json:"reply_to,omitempty"`
	TopicID   int      `json:"topic_id,omitempty"`
	FwdFrom   int64    `json:"fwd_from,omitempty"`
	FwdPost   int      `json:"fwd_post,omitempty"`
	FwdDate   int      `json:"fwd_date,omitempty"`
	Pts       int      `json:"pts"`
	Markup    []byte   `json:"markup,omitempty"` // TL-encoded
	Twin      int      `json:"twin,omitempty"`
	EditDate  int      `json:"edit_date,omitempty"`
	EditPts   int      `json:"edit_pts,omitempty"`
	Deleted   bool     `json:"deleted,omitempty"`
}

type snapDocument struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Mime string `json:"mime"`
	Size int64  `json:"size"`
	Path string `json:"path"`
	Date int    `json:"date"`
}

type snapPhoto struct {
	ID   int64  `json:"id"`
	Path string `json:"path"`
	Size int64  `json:"size"`
	W    int    `json:"w"`
	H    int    `json:"h"`
	Date int    `json:"date"`
}

func toSnap(m *message) (snapMessage, error) {
	s := snapMessage{ID: m.id, Date: m.date, From: m.from, Peer: m.peer, Out: m.out, Text: m.text, Doc: m.doc,
		Photo: m.photo, GroupedID: m.groupedID, ReplyTo: m.replyTo, TopicID: m.topicID, FwdFrom: m.fwdFrom,
		FwdPost: m.fwdPost, FwdDate: m.fwdDate, Pts: m.pts, Twin: m.twin, EditDate: m.editDate, EditPts: m.editPts, Deleted: m.deleted}
	if m.markup != nil {
		var b bin.Buffer
		if err := m.markup.Encode(&b); err != nil {
			return s, err
		}
		s.Markup = b.Buf
	}
	for _, ent := range m.entities {
		var b bin.Buffer
		if err := ent.Encode(&b); err != nil {
			return s, err
		}
		s.Entities = append(s.Entities, b.Buf)
	}
	return s, nil
}

func fromSnap(s snapMessage) (*message, error) {
	m := &message{id: s.ID, date: s.Date, from: s.From, peer: s.Peer, out: s.Out, text: s.Text, doc: s.Doc,
		photo: s.Photo, groupedID: s.GroupedID, replyTo: s.ReplyTo, topicID: s.TopicID, fwdFrom: s.FwdFrom,
		fwdPost: s.FwdPost, fwdDate: s.FwdDate, pts: s.Pts, twin: s.Twin, editDate: s.EditDate, editPts: s.EditPts, deleted: s.Deleted}
	if s.Markup != nil {
		var rm tg.ReplyInlineMarkup
		if err := rm.Decode(&bin.Buffer{Buf: s.Markup}); err != nil {
			return nil, err
		}
		m.markup = &rm
	}
	for _, raw := range s.Entities {
		ent, err := tg.DecodeMessageEntity(&bin.Buffer{Buf: raw})
		if err != nil {
			return nil, err
		}
		m.entities = append(m.entities, ent)
	}
	return m, nil
}

func encodeRights(r tg.ChatAdminRights) []byte {
	var b bin.Buffer
	_ = r.Encode(&b) // flags and bools only: cannot fail
	return b.Buf
}

func decodeRights(raw []byte) (tg.ChatAdminRights, error) {
	var r tg.ChatAdminRights
	err := r.Decode(&bin.Buffer{Buf: raw})
	r.Flags = 0
	return r, err
}

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
	data, ok := e.snapshotLocked()
	upTo := e.changes
	e.mu.Unlock()
	if ok && e.write(data) {
		e.saved = upTo
	}
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

// snapshotLocked encodes the state to save. Called under e.mu.
func (e *Emulator) snapshotLocked() ([]byte, bool) {
	snap := snapshot{RNG: e.rng.state, RandomIDs: e.randomIDs, BotCommands: e.botCommands}
	for _, c := range e.channels {
		sc := snapChannel{ID: c.id, Members: c.members}
		for id, r := range c.rights {
			if sc.Rights == nil {
				sc.Rights = map[int64][]byte{}
			}
			sc.Rights[id] = encodeRights(r)
		}
		for _, m := range c.msgs[e.seeded[c.id]:] {
			sm, err := toSnap(m)
			if err != nil {
				e.log.Error("emulator: save state", "error", err)
				return nil, false
			}
			sc.Posts = append(sc.Posts, sm)
		}
		snap.Channels = append(snap.Channels, sc)
	}
	for _, u := range e.users {
		su := snapUser{ID: u.id, Pts: u.pts, Qts: u.qts}
		for id := range u.blocked {
			su.Blocked = append(su.Blocked, id)
		}
		for _, ev := range u.qtsLog {
			su.QtsLog = append(su.QtsLog, snapParticipant{Qts: ev.Qts, Date: ev.Date, ChannelID: ev.ChannelID,
				ActorID: ev.ActorID, WasAdmin: ev.WasAdmin, Admin: ev.Admin, Rights: encodeRights(ev.Rights)})
		}
		for _, m := range u.box {
			sm, err := toSnap(m)
			if err != nil {
				e.log.Error("emulator: save state", "error", err)
				return nil, false
			}
			su.Box = append(su.Box, sm)
		}
		snap.Users = append(snap.Users, su)
	}
	for _, d := range e.docs {
		if d.uploaded {
			snap.Docs = append(snap.Docs, snapDocument{ID: d.id, Name: d.name, Mime: d.mime, Size: d.size, Path: d.path, Date: d.date})
		}
	}
	for _, p := range e.photos {
		if p.uploaded {
			snap.Photos = append(snap.Photos, snapPhoto{ID: p.id, Path: p.path, Size: p.size, W: p.w, H: p.h, Date: p.date})
		}
	}
	data, err := json.Marshal(snap)
	if err != nil {
		e.log.Error("emulator: save state", "error", err)
		return nil, false
	}
	return data, true
}

// write replaces the saved snapshot with data; false when it could not
// (logged).
func (e *Emulator) write(data []byte) bool {
	tmp := filepath.Join(e.dir, worldFile+".tmp")
	err := os.WriteFile(tmp, data, 0o644)
	if err == nil {
		err = os.Rename(tmp, filepath.Join(e.dir, worldFile))
	}
	if err != nil {
		e.log.Error("emulator: save state", "error", err)
		return false
	}
	return true
}

// load applies a saved snapshot on top of the freshly built seed world.
func (e *Emulator) load() error {
	data, err := os.ReadFile(filepath.Join(e.dir, worldFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var snap snapshot
	if err := json.Unmarshal(data, &snap); err != nil {
		return fmt.Errorf("%s: %w", worldFile, err)
	}
	e.rng.state = snap.RNG
	if snap.RandomIDs != nil {
		e.randomIDs = snap.RandomIDs
	}
	e.botCommands = snap.BotCommands
	for _, d := range snap.Docs {
		e.docs[d.ID] = &document{id: d.ID, name: d.Name, mime: d.Mime, size: d.Size, path: d.Path, date: d.Date, uploaded: true}
	}
	for _, p := range snap.Photos {
		e.photos[p.ID] = &photo{id: p.ID, path: p.Path, size: p.Size, w: p.W, h: p.H, date: p.Date, uploaded: true}
	}
	for _, sc := range snap.Channels {
		c := e.channels[sc.ID]
		if c == nil {
			return fmt.Errorf("%s: channel %d is not in the seed (seed changed? remove the state directory)", worldFile, sc.ID)
		}
		c.members = sc.Members
		if c.members == nil {
			c.members = map[int64]role{}
		}
		for id, raw := range sc.Rights {
			r, err := decodeRights(raw)
			if err != nil {
				return fmt.Errorf("%s: channel %d: rights: %w", worldFile, c.id, err)
			}
			c.rights[id] = r
		}
		for _, sm := range sc.Posts {
			m, err := fromSnap(sm)
			if err != nil {
				return err
			}
			if m.id != len(c.msgs)+1 {
				return fmt.Errorf("%s: channel %d: post %d out of order", worldFile, c.id, m.id)
			}
			c.msgs = append(c.msgs, m)
			c.pts = m.pts
		}
	}
	for _, su := range snap.Users {
		u := e.users[su.ID]
		if u == nil {
			return fmt.Errorf("%s: user %d is not in the seed", worldFile, su.ID)
		}
		for _, sm := range su.Box {
			m, err := fromSnap(sm)
			if err != nil {
				return err
			}
			u.box = append(u.box, m)
			u.pts = m.pts
		}
		u.pts = max(u.pts, su.Pts)
		u.qts = su.Qts
		for _, id := range su.Blocked {
			u.blocked[id] = true
		}
		for _, sp := range su.QtsLog {
			r, err := decodeRights(sp.Rights)
			if err != nil {
				return fmt.Errorf("%s: user %d: qts event: %w", worldFile, u.id, err)
			}
			u.qtsLog = append(u.qtsLog, &participantEvent{Qts: sp.Qts, Date: sp.Date, ChannelID: sp.ChannelID,
				ActorID: sp.ActorID, WasAdmin: sp.WasAdmin, Admin: sp.Admin, Rights: r})
		}
	}
	return nil
}
