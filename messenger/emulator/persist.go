package emulator

import (
	"github.com/gotd/td/bin"
	"github.com/gotd/td/tg"
)

// State persistence: the seed rebuilds the same world (ids are
// deterministic), so only what happened since is saved — memberships, new
// channel posts, private messages, uploaded documents and photos and the id
// generator — after every change (save.go). Auth keys live inside tgtest
// and are not persisted: after a restart clients sign in again.

// snapshot is the saved state: a base (world.json), or a line of the
// journal (world.log) with what changed since the last line — channels and
// users with their messages that changed (all of them in a base) and the
// random ids remembered since — applied in turn on the seed's world.
type snapshot struct {
	// Seq is the number of changes the snapshot holds: a journal's lines
	// that a newer base holds already are skipped.
	Seq      uint64         `json:"seq"`
	RNG      uint64         `json:"rng"`
	Channels []snapChannel  `json:"channels,omitempty"` // written by snapshotLocked
	Users    []snapUser     `json:"users,omitempty"`    // written by snapshotLocked
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
	Posts  []snapMessage    `json:"posts,omitempty"` // after the seeded ones
}

type snapUser struct {
	ID  int64         `json:"id"`
	Box []snapMessage `json:"box,omitempty"`
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
	messageFields
	Entities [][]byte `json:"entities,omitempty"` // TL-encoded
	Markup   []byte   `json:"markup,omitempty"`   // TL-encoded
}

// messageFields are a saved message's fields besides its entities and
// keyboard (comparable: savedMessage compares them).
type messageFields struct {
	ID        int    `json:"id"`
	Date      int    `json:"date"`
	From      int64  `json:"from,omitempty"`
	Peer      int64  `json:"peer,omitempty"`
	Out       bool   `json:"out,omitempty"`
	Text      string `json:"text,omitempty"`
	Doc       int64  `json:"doc,omitempty"`
	Photo     int64  `json:"photo,omitempty"`
	GroupedID int64  `json:"grouped_id,omitempty"`
	ReplyTo   int    `json:"reply_to,omitempty"`
	TopicID   int    `json:"topic_id,omitempty"`
	FwdFrom   int64  `json:"fwd_from,omitempty"`
	FwdPost   int    `json:"fwd_post,omitempty"`
	FwdDate   int    `json:"fwd_date,omitempty"`
	Pts       int    `json:"pts"`
	Twin      int    `json:"twin,omitempty"`
	EditDate  int    `json:"edit_date,omitempty"`
	EditPts   int    `json:"edit_pts,omitempty"`
	Deleted   bool   `json:"deleted,omitempty"`
}

type snapDocument struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Mime string `json:"mime"`
	Size int64  `json:"size"`
	Path string `json:"path"`
	Date int    `json:"date"`
	DC   int    `json:"dc,omitempty"`
}

type snapPhoto struct {
	ID   int64  `json:"id"`
	Path string `json:"path"`
	Size int64  `json:"size"`
	W    int    `json:"w"`
	H    int    `json:"h"`
	Date int    `json:"date"`
	DC   int    `json:"dc,omitempty"`
}

// savedDC is the DC of a saved file; states saved before DCs existed
// kept every file on the entry DC.
func savedDC(dc int) int {
	if validDC(dc) {
		return dc
	}
	return EntryDC
}

// fieldsOf is a message's saved form without its entities and keyboard.
func fieldsOf(m *message) messageFields {
	return messageFields{ID: m.id, Date: m.date, From: m.from, Peer: m.peer, Out: m.out, Text: m.text, Doc: m.doc,
		Photo: m.photo, GroupedID: m.groupedID, ReplyTo: m.replyTo, TopicID: m.topicID, FwdFrom: m.fwdFrom,
		FwdPost: m.fwdPost, FwdDate: m.fwdDate, Pts: m.pts, Twin: m.twin, EditDate: m.editDate, EditPts: m.editPts, Deleted: m.deleted}
}

func toSnap(m *message) (snapMessage, error) {
	s := snapMessage{messageFields: fieldsOf(m)}
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
