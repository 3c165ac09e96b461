package emulator

import (
	"fmt"
	"image"
	_ "image/jpeg" // photo sizes
	_ "image/png"  // photo sizes
	"mime"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gotd/td/tg"
	"github.com/gotd/td/tgerr"
)

// The world model. Every field is guarded by Emulator.mu.

type user struct {
	id int64
	// dc is the user's home DC.
	dc        int
	phone     string
	username  string
	firstName string
	bot       bool
	premium   bool
	// sentCode is how auth.sendCode answers for the user (Seed).
	sentCode string
	token    string
	password *srpPassword
	// box is the user's private message box; ids and pts are per user.
	box []*message
	pts int
	// qts and qtsLog are the user's qts events (channel roles changed).
	qts    int
	qtsLog []*participantEvent
	// blocked holds the users (bots) this user blocked.
	blocked map[int64]bool
	unsaved unsaved
}

// unsaved is what the next save writes of a channel's or user's messages
// besides the ones added since (see take).
type unsaved struct {
	from    int        // the index of the first message no save has written
	changed []*message // older messages changed since the last save
}

type role int

const (
	roleNone role = iota
	roleMember
	roleAdmin
	roleCreator
)

type channel struct {
	id        int64
	title     string
	username  string
	invite    string
	forum     bool
	protected bool
	joinReq   bool
	date      int
	members   map[int64]role
	rights    map[int64]tg.ChatAdminRights // administrators made by channels.editAdmin
	msgs      []*message                   // msgs[i].id == i+1
	pts       int
	topics    []*topic
	unsaved   unsaved
}

type topic struct {
	id    int
	title string
	date  int
	// pin is the topic's place among the pinned topics (1 first); 0 when
	// it is not pinned.
	pin int
}

type message struct {
	id   int
	date int
	// from is the author (private messages, groups); 0 for channel posts.
	from int64
	// peer is the other side of a private message.
	peer      int64
	out       bool
	text      string
	entities  []tg.MessageEntityClass
	doc       int64
	photo     int64
	groupedID int64
	replyTo   int
	topicID   int
	action    tg.MessageActionClass
	fwdFrom   int64 // channel id of a forwarded post
	fwdPost   int
	fwdDate   int
	pts       int
	noforward bool
	// markup is the inline keyboard of a bot's message.
	markup *tg.ReplyInlineMarkup
	// twin is the id of the same private message in the other side's box.
	twin int
	// editDate and editPts are set by the last edit.
	editDate int
	editPts  int
	// deleted is set by channels.deleteMessages: the message reads as
	// empty and leaves history and search.
	deleted bool
	// saved is the message's saved form (save.go).
	saved *savedMessage
}

type document struct {
	id int64
	// dc is the DC that stores the bytes.
	dc     int
	name   string
	mime   string
	size   int64
	path   string // bytes on disk; empty for generated documents
	gen    *Generate
	zip    *genZip // the generated ZIP of gen, when gen.Zip is set
	date   int
	refVer int
	// uploaded documents are persisted; seeded ones are rebuilt.
	uploaded bool
}

type photo struct {
	id int64
	// dc is the DC that stores the bytes.
	dc       int
	path     string
	size     int64
	w, h     int
	date     int
	refVer   int
	uploaded bool
}

// rng is splitmix64: deterministic ids and access hashes from the seed.
type rng struct{ state uint64 }

func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	return mix(r.state)
}

func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

var baseDate = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// accessHash is the per-viewer access hash of an entity.
func (e *Emulator) accessHash(viewer, id int64) int64 {
	return int64(mix(uint64(e.idSeed)*0x9e3779b97f4a7c15^uint64(viewer)*0xbf58476d1ce4e5b9^uint64(id)) >> 1)
}

func (e *Emulator) newID() int64 {
	return int64(e.rng.next()>>24) + 1_000_000_000
}

// build creates the world from the seed.
func (e *Emulator) build(s *Seed) error {
	e.rng = rng{state: uint64(s.IDSeed)}
	e.idSeed = s.IDSeed
	acc := &user{id: e.newID(), dc: orEntry(s.Account.DC), phone: normPhone(s.Account.Phone), firstName: "Hoard", premium: s.Account.Premium, sentCode: s.Account.SentCode}
	if s.Account.Password != "" {
		pw, err := e.newSRPPassword(s.Account.Password)
		if err != nil {
			return err
		}
		acc.password = pw
	}
	e.addUser(acc)
	e.account = acc
	if s.Bot.Token != "" {
		b := &user{id: e.newID(), dc: orEntry(s.Bot.DC), username: strings.ToLower(s.Bot.Username), firstName: s.Bot.Username, bot: true, token: s.Bot.Token}
		if id, _, ok := strings.Cut(s.Bot.Token, ":"); ok {
			var n int64
			if _, err := fmt.Sscan(id, &n); err == nil && n > 0 {
				b.id = n
			}
		}
		e.addUser(b)
		e.bot = b
	}
	dest := e.newChannel(s.Destination.Title, s.Destination.Username, "", false, false)
	dest.members[acc.id] = roleCreator
	if e.bot != nil && (s.Destination.BotAdmin == nil || *s.Destination.BotAdmin) {
		dest.members[e.bot.id] = roleAdmin
	}
	e.dest = dest
	for i, sc := range s.Channels {
		c := e.newChannel(sc.PlatformTitle(), sc.Username, sc.Invite, sc.Forum, sc.Protected)
		c.joinReq = sc.JoinRequest
		if sc.Joined {
			c.members[acc.id] = roleMember
		}
		where := fmt.Sprintf("channels[%d]", i)
		if err := e.seedPosts(c, sc.Posts, 0, where+".posts"); err != nil {
			return err
		}
		for j, st := range sc.Topics {
			t := &topic{id: 0, title: st.title(), date: int(baseDate.Unix())}
			if st.Pinned {
				t.pin = pinnedTopics(c) + 1
			}
			m := e.appendMessage(c, &message{date: t.date, action: &tg.MessageActionTopicCreate{Title: t.title, IconColor: 0x6FB9F0}})
			t.id = m.id
			c.topics = append(c.topics, t)
			if err := e.seedPosts(c, st.Posts, t.id, fmt.Sprintf("%s.topics[%d].posts", where, j)); err != nil {
				return err
			}
		}
	}
	for _, su := range s.Users {
		u := &user{id: e.userIDFor(normPhone(su.Phone)), dc: orEntry(su.DC), phone: normPhone(su.Phone), username: strings.ToLower(su.Username),
			firstName: su.FirstName}
		e.addUser(u)
		e.seededUsers = append(e.seededUsers, u)
	}
	return nil
}

// userIDFor derives a seeded user's id from the phone, not from the id
// generator, so that adding users to a seed leaves every other id as it was
// (a saved world stays valid).
func (e *Emulator) userIDFor(phone string) int64 {
	h := uint64(e.idSeed)
	for _, r := range phone {
		h = mix(h ^ uint64(r))
	}
	id := int64(h%1_000_000_000) + 5_000_000_000
	for e.users[id] != nil || e.channels[id] != nil {
		id++
	}
	return id
}

// orEntry is dc, or EntryDC for a seed built in code that left it unset.
func orEntry(dc int) int {
	if validDC(dc) {
		return dc
	}
	return EntryDC
}

func normPhone(p string) string {
	return strings.TrimPrefix(strings.ReplaceAll(strings.ReplaceAll(p, " ", ""), "-", ""), "+")
}

func (e *Emulator) addUser(u *user) {
	u.blocked = map[int64]bool{}
	e.users[u.id] = u
	if u.phone != "" {
		e.phones[u.phone] = u
	}
	if u.username != "" {
		e.usernames[u.username] = u.id
	}
}

func (e *Emulator) newChannel(title, username, invite string, forum, protected bool) *channel {
	c := &channel{
		id: e.newID(), title: title, username: strings.ToLower(username), invite: invite,
		forum: forum, protected: protected, date: int(baseDate.Unix()), members: map[int64]role{},
		rights: map[int64]tg.ChatAdminRights{},
	}
	e.channels[c.id] = c
	if c.username != "" {
		e.usernames[c.username] = c.id
	}
	if invite != "" {
		e.invites[invite] = c
	}
	action := tg.MessageActionClass(&tg.MessageActionChannelCreate{Title: title})
	e.appendMessage(c, &message{date: c.date, action: action})
	if forum {
		c.topics = append(c.topics, &topic{id: 1, title: "General", date: c.date})
	}
	return c
}

// deletePost deletes post id of c (it reads as empty from now on) and
// reports whether there was such a post to delete.
func (c *channel) deletePost(id int) bool {
	if id < 1 || id > len(c.msgs) || c.msgs[id-1].deleted {
		return false
	}
	c.msgs[id-1].deleted = true
	c.unsaved.note(c.msgs[id-1])
	return true
}

func (e *Emulator) appendMessage(c *channel, m *message) *message {
	e.dirty = true
	m.id = len(c.msgs) + 1
	c.pts++
	m.pts = c.pts
	c.msgs = append(c.msgs, m)
	return m
}

func (e *Emulator) appendPrivate(u *user, m *message) *message {
	e.dirty = true
	m.id = len(u.box) + 1
	u.pts++
	m.pts = u.pts
	u.box = append(u.box, m)
	return m
}

func (e *Emulator) seedPosts(c *channel, posts []SeedPost, topicID int, where string) error {
	ids := make([]int, len(posts))
	docs := make([]int64, len(posts))
	for i, p := range posts {
		m := &message{text: p.Text, groupedID: p.Album}
		if c.forum {
			m.topicID = 1
			if topicID != 0 {
				m.topicID = topicID
			}
		}
		if p.caption() != "" {
			m.text = p.caption()
		}
		m.date = int(baseDate.Add(time.Duration(len(c.msgs)) * time.Minute).Unix())
		if p.Date != "" {
			d, _ := time.Parse(time.RFC3339, p.Date)
			m.date = int(d.Unix())
		}
		if p.ReplyTo != nil {
			m.replyTo = ids[*p.ReplyTo]
		}
		switch {
		case p.SameDocumentAs != nil:
			m.doc = docs[*p.SameDocumentAs]
			if p.File == "" && p.Text != "" {
				m.text = p.Text
			}
		case p.File != "":
			st, err := os.Stat(p.File)
			if err != nil {
				return fmt.Errorf("%s[%d]: %w", where, i, err)
			}
			name := p.name()
			if name == "" {
				name = filepath.Base(p.File)
			}
			d := &document{id: e.newID(), dc: orEntry(p.DC), name: name, mime: mimeOf(name), size: st.Size(), path: p.File, date: m.date}
			e.docs[d.id] = d
			m.doc = d.id
		case p.Generate != nil:
			name := p.Generate.Name
			if p.name() != "" {
				name = p.name()
			}
			g := *p.Generate
			d := &document{id: e.newID(), dc: orEntry(p.DC), name: name, mime: mimeOf(name), size: g.Size, gen: &g, date: m.date}
			if g.Zip != nil {
				z, err := newGenZip(g)
				if err != nil {
					return fmt.Errorf("%s[%d]: %w", where, i, err)
				}
				d.zip = z
			}
			e.docs[d.id] = d
			m.doc = d.id
		case p.Photo != "":
			ph, err := e.newPhoto(p.Photo, m.date, orEntry(p.DC))
			if err != nil {
				return fmt.Errorf("%s[%d]: %w", where, i, err)
			}
			m.photo = ph.id
		}
		e.appendMessage(c, m)
		ids[i] = m.id
		docs[i] = m.doc
	}
	return nil
}

// newPhoto stores a photo on DC dc.
func (e *Emulator) newPhoto(path string, date, dc int) (*photo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	w, h := 800, 600
	if cfg, _, err := image.DecodeConfig(f); err == nil {
		w, h = cfg.Width, cfg.Height
	}
	p := &photo{id: e.newID(), dc: dc, path: path, size: st.Size(), w: w, h: h, date: date}
	e.photos[p.id] = p
	return p, nil
}

func mimeOf(name string) string {
	ext := strings.ToLower(filepath.Ext(name))
	switch ext {
	case ".zip":
		return "application/zip"
	case ".rar":
		return "application/x-rar-compressed"
	case ".7z":
		return "application/x-7z-compressed"
	case ".stl":
		return "model/stl"
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Views: TL objects for one viewer. Called under e.mu.

func (e *Emulator) userView(viewer int64, u *user) *tg.User {
	v := &tg.User{
		ID: u.id, AccessHash: e.accessHash(viewer, u.id), FirstName: u.firstName, Username: u.username,
		Bot: u.bot, Premium: u.premium, Self: viewer == u.id,
	}
	if viewer == u.id {
		v.Phone = u.phone
	}
	return v
}

func (e *Emulator) channelView(viewer int64, c *channel) tg.ChatClass {
	r := c.members[viewer]
	if r == roleNone && c.username == "" {
		// Not a member of a private channel: the viewer only learns it is
		// forbidden.
		return &tg.ChannelForbidden{ID: c.id, AccessHash: e.accessHash(viewer, c.id), Title: c.title,
			Broadcast: !c.forum, Megagroup: c.forum}
	}
	v := &tg.Channel{
		ID: c.id, AccessHash: e.accessHash(viewer, c.id), Title: c.title, Username: c.username,
		Broadcast: !c.forum, Megagroup: c.forum, Forum: c.forum, Noforwards: c.protected,
		Left: r == roleNone, Creator: r == roleCreator, Photo: &tg.ChatPhotoEmpty{}, Date: c.date,
	}
	if r == roleAdmin {
		v.SetAdminRights(c.adminRights(viewer))
	}
	return v
}

// adminRights are an administrator's rights: as granted by
// channels.editAdmin, or those of a seeded administrator.
func (c *channel) adminRights(userID int64) tg.ChatAdminRights {
	if r, ok := c.rights[userID]; ok {
		return r
	}
	return tg.ChatAdminRights{PostMessages: true, EditMessages: true, DeleteMessages: true}
}

func (e *Emulator) fileReference(kind string, id int64, ver int) []byte {
	return fmt.Appendf(nil, "%s%x.%d", kind, uint64(id), ver)
}

func (e *Emulator) docView(d *document) *tg.Document {
	return &tg.Document{
		ID: d.id, AccessHash: e.accessHash(0, d.id), FileReference: e.fileReference("d", d.id, d.refVer),
		Date: d.date, MimeType: d.mime, Size: d.size, DCID: d.dc,
		Attributes: []tg.DocumentAttributeClass{&tg.DocumentAttributeFilename{FileName: d.name}},
	}
}

func (e *Emulator) photoView(p *photo) *tg.Photo {
	return &tg.Photo{
		ID: p.id, AccessHash: e.accessHash(0, p.id), FileReference: e.fileReference("p", p.id, p.refVer),
		Date: p.date, DCID: p.dc,
		Sizes: []tg.PhotoSizeClass{&tg.PhotoSize{Type: "x", W: p.w, H: p.h, Size: int(p.size)}},
	}
}

func (e *Emulator) messageView(viewer int64, c *channel, m *message) tg.MessageClass {
	if m.deleted {
		return &tg.MessageEmpty{ID: m.id}
	}
	peer := &tg.PeerChannel{ChannelID: c.id}
	var reply tg.MessageReplyHeaderClass
	switch {
	case c.forum && m.topicID > 1:
		h := &tg.MessageReplyHeader{ForumTopic: true, ReplyToMsgID: m.topicID}
		if m.replyTo != 0 {
			h.ReplyToMsgID = m.replyTo
			h.ReplyToTopID = m.topicID
		}
		reply = h
	case m.replyTo != 0:
		reply = &tg.MessageReplyHeader{ReplyToMsgID: m.replyTo}
	}
	if m.action != nil {
		s := &tg.MessageService{ID: m.id, PeerID: peer, Date: m.date, Action: m.action, Post: !c.forum}
		if reply != nil {
			s.ReplyTo = reply
		}
		return s
	}
	v := &tg.Message{
		ID: m.id, PeerID: peer, Date: m.date, Message: m.text, Post: !c.forum,
		GroupedID: m.groupedID, Noforwards: c.protected || m.noforward, Entities: m.entities,
	}
	if reply != nil {
		v.ReplyTo = reply
	}
	if c.forum && m.from != 0 {
		v.FromID = &tg.PeerUser{UserID: m.from}
	}
	e.attachMedia(v, m)
	if m.fwdFrom != 0 {
		v.FwdFrom = tg.MessageFwdHeader{FromID: &tg.PeerChannel{ChannelID: m.fwdFrom}, ChannelPost: m.fwdPost, Date: m.fwdDate}
		v.SetFwdFrom(v.FwdFrom)
	}
	return v
}

func (e *Emulator) attachMedia(v *tg.Message, m *message) {
	if m.doc != 0 {
		if d := e.docs[m.doc]; d != nil {
			v.Media = &tg.MessageMediaDocument{Document: e.docView(d)}
		}
	}
	if m.photo != 0 {
		if p := e.photos[m.photo]; p != nil {
			v.Media = &tg.MessageMediaPhoto{Photo: e.photoView(p)}
		}
	}
}

// privateView renders a message of owner's box.
func (e *Emulator) privateView(owner *user, m *message) tg.MessageClass {
	v := &tg.Message{
		ID: m.id, Out: m.out, PeerID: &tg.PeerUser{UserID: m.peer}, Date: m.date, Message: m.text,
		Entities: m.entities, Noforwards: m.noforward,
	}
	if m.out {
		v.FromID = &tg.PeerUser{UserID: owner.id}
	} else {
		v.FromID = &tg.PeerUser{UserID: m.peer}
	}
	if m.replyTo != 0 {
		v.ReplyTo = &tg.MessageReplyHeader{ReplyToMsgID: m.replyTo}
	}
	if m.markup != nil {
		v.ReplyMarkup = m.markup
	}
	if m.editDate != 0 {
		v.SetEditDate(m.editDate)
	}
	e.attachMedia(v, m)
	if m.fwdFrom != 0 {
		v.SetFwdFrom(tg.MessageFwdHeader{FromID: &tg.PeerChannel{ChannelID: m.fwdFrom}, ChannelPost: m.fwdPost, Date: m.fwdDate})
	}
	return v
}

// Input resolution. Errors are the platform's.

func (e *Emulator) inputChannel(viewer int64, in tg.InputChannelClass) (*channel, error) {
	var id, hash int64
	switch v := in.(type) {
	case *tg.InputChannel:
		id, hash = v.ChannelID, v.AccessHash
	case *tg.InputChannelFromMessage:
		id, hash = v.ChannelID, e.accessHash(viewer, v.ChannelID)
	default:
		return nil, tgerr.New(400, "CHANNEL_INVALID")
	}
	c := e.channels[id]
	if c == nil || hash != e.accessHash(viewer, id) {
		return nil, tgerr.New(400, "CHANNEL_INVALID")
	}
	return c, nil
}

// peer is a resolved input peer: exactly one of c and u is set.
type peer struct {
	c *channel
	u *user
}

// id is the channel's or the user's id (the chat of the bot's flood model).
func (p peer) id() int64 {
	if p.c != nil {
		return p.c.id
	}
	if p.u != nil {
		return p.u.id
	}
	return 0
}

func (e *Emulator) inputPeer(viewer int64, in tg.InputPeerClass) (peer, error) {
	switch v := in.(type) {
	case *tg.InputPeerChannel:
		c, err := e.inputChannel(viewer, &tg.InputChannel{ChannelID: v.ChannelID, AccessHash: v.AccessHash})
		return peer{c: c}, err
	case *tg.InputPeerUser:
		u := e.users[v.UserID]
		if u == nil || v.AccessHash != e.accessHash(viewer, v.UserID) {
			return peer{}, tgerr.New(400, "PEER_ID_INVALID")
		}
		return peer{u: u}, nil
	case *tg.InputPeerSelf:
		return peer{u: e.users[viewer]}, nil
	}
	return peer{}, tgerr.New(400, "PEER_ID_INVALID")
}

// readable checks that viewer may read c.
func (e *Emulator) readable(viewer int64, c *channel) error {
	if c.members[viewer] == roleNone && c.username == "" {
		return tgerr.New(400, "CHANNEL_PRIVATE")
	}
	return nil
}

// writable checks that viewer may post in c.
func (e *Emulator) writable(viewer int64, c *channel) error {
	if err := e.readable(viewer, c); err != nil {
		return err
	}
	r := c.members[viewer]
	switch {
	case r == roleNone:
		return tgerr.New(403, "CHAT_WRITE_FORBIDDEN")
	case !c.forum && r < roleAdmin:
		return tgerr.New(403, "CHAT_ADMIN_REQUIRED")
	}
	return nil
}
