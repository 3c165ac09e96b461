// Package emulator is an in-process MTProto server, built on gotd's tgtest,
// that the unmodified gotd client talks to over loopback. It models exactly
// the part of the platform hoard uses: phone and bot-token login, channels
// and forum topics with per-viewer access hashes, membership, usernames and
// invite links, protected channels, posts with documents, photos, albums,
// replies and captions, file references, chunked downloads and part uploads
// under the platform's rules, sendMedia, forwarding and pushed updates with
// getDifference. For the chat bot it models seeded users who sign in and
// talk to it, private-chat history, deep-link starts, inline keyboards,
// button presses answered by the bot, edits, blocking, the command list,
// channels.editAdmin and the bot's flood model (see bot.go). Every other
// method answers INPUT_METHOD_INVALID and is logged at error level.
//
// File bytes live on disk (the seed's files, uploads under the state
// directory) or are generated on the fly, never whole in memory. Tests steer
// it with faults (InjectFault), latency, call counters and a login-code hook.
package emulator

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gotd/td/bin"
	"github.com/gotd/td/crypto"
	"github.com/gotd/td/exchange"
	"github.com/gotd/td/mt"
	"github.com/gotd/td/tg"
	"github.com/gotd/td/tgerr"
	"github.com/gotd/td/tgtest"
)

// DefaultLoginCode is the login code accepted when Options.LoginCode is empty.
const DefaultLoginCode = "24680"

// Options configure an Emulator.
type Options struct {
	// Seed is the initial world (required).
	Seed *Seed
	// StateDir holds uploaded files and the server key. Empty: a temporary
	// directory removed by Close.
	StateDir string
	// Addr is the listen address; default 127.0.0.1:0 (random port).
	Addr string
	// Key is the server's RSA key. Default: StateDir/server-key.pem, created
	// on first use.
	Key *rsa.PrivateKey
	// LoginCode is the code every phone login expects; default
	// DefaultLoginCode.
	LoginCode string
	// OnCode is called with the code each time a login code is "sent".
	OnCode func(phone, code string)
	// ReadTimeout closes idle client connections; default 1 hour (gotd pings
	// every 60 s, tgtest's default of 30 s would drop idle clients).
	ReadTimeout time.Duration
	// Logger receives the emulator's logs; default slog.Default().
	Logger *slog.Logger
	// CallbackTimeout is how long a button press waits for the bot's
	// answer before failing with BOT_RESPONSE_TIMEOUT; default 15 s.
	CallbackTimeout time.Duration
	// BotFlood is the bot's flood model; the zero value is
	// DefaultBotFlood.
	BotFlood BotFlood
	// ExportFlood is the flood model of auth.exportAuthorization; the
	// zero value is DefaultExportFlood.
	ExportFlood ExportFlood
	// RoundTrip is each DC's round-trip time, added to every answer of
	// that DC (none for a DC not named); nil means DefaultRoundTrip, an
	// empty map none at all. The seed's rtt_ms wins.
	RoundTrip map[int]time.Duration
	// DCAddrs are listen addresses of DCs other than the entry DC
	// (default 127.0.0.1:0 each).
	DCAddrs map[int]string
	// UserFlood, when set, is the user accounts' flood model
	// (userflood.go); nil: the seed's "flood", else the platform's.
	UserFlood *UserFlood
	// Origin names the process a connection comes from, for telling one
	// auth key used from two places at once (origin.go); default: the
	// process owning the client's socket, else the client's address.
	Origin Origin
	// UploadPartLife is how long an uploaded part is kept for the
	// sendMedia that uses it (the platform: "between several minutes and
	// several hours"); a file posted with a part older than that is
	// answered FILE_PART_X_MISSING. Default 1 hour; negative keeps parts
	// until they are used.
	UploadPartLife time.Duration
}

// Emulator is a running MTProto server with a seeded world. Its methods are
// safe for concurrent use.
type Emulator struct {
	opts   Options
	log    *slog.Logger
	dir    string
	tmpDir bool
	key    *rsa.PrivateKey
	dcs    [NumDCs + 1]*dataCentre // by DC id; dcs[0] is unused
	cancel context.CancelFunc

	mu        sync.Mutex
	rng       rng
	idSeed    int64
	users     map[int64]*user
	phones    map[string]*user
	usernames map[string]int64
	invites   map[string]*channel
	channels  map[int64]*channel
	docs      map[int64]*document
	photos    map[int64]*photo
	account   *user
	bot       *user
	dest      *channel
	auth      map[[8]byte]int64               // auth key → user id
	sessions  map[int64]map[int64]mainSession // user id → main sessions by session id
	// exports are the authorizations exported for other DCs (by token),
	// exportWindows each user's export budget.
	exports       map[string]exportedAuth
	exportWindows map[int64]*window
	exportFlood   ExportFlood
	// keyConns are the open connections that used each auth key; killed
	// the keys killed for being used from two places at once.
	keyConns   map[[8]byte]map[*keyConn]bool
	killed     map[[8]byte]*killedKey
	keysKilled int
	codes      map[string]string // phone code hash → phone
	uploads    map[string]*upload
	randomIDs  map[string]int
	faults     []*fault
	calls      map[string]int
	refusals   map[string]int         // "method: ERROR_TYPE" → errors answered
	perSecond  map[int64]*secondCount // user id → requests in the current and the busiest second
	latency    time.Duration
	dropPush   map[int64]int // user id → pushes still to lose
	seeded     map[int64]int // channel id → number of seeded messages
	srp        map[int64]*srpSession
	// awaiting2FA: auth key → user whose code was right but whose 2FA
	// password is still due.
	awaiting2FA map[[8]byte]int64
	dirty       bool // the world changed since the last change was numbered (call.finish)

	// changes counts the changes handed to persist; saveMu orders the
	// snapshots written, saved is the count the last one holds.
	changes uint64
	saveMu  sync.Mutex
	saved   uint64
	// The saved state is a base snapshot and a journal of what changed
	// since (save.go): their sizes, whether the next save must be a
	// base, and the random ids in the order they were remembered with how
	// many of them are saved.
	baseBytes, journalBytes int64
	baseNext                bool
	randomIDOrder           []string
	randomIDsSaved          int

	seededUsers  []*user // the seed's extra users, in seed order
	queries      map[int64]*callbackQuery
	botCommands  []BotCommand
	flood        BotFlood
	floodBuckets map[int64]*bucket // chat id → bucket; 0: the bot overall
	floodTrips   int
	botForwards  map[int64][]time.Time // chat id → when each message the bot forwarded there arrived
	uflood       *userFloodState       // the user flood model (userflood.go)
	partCaps     [2]int                // SetPartCaps: the regular and the Premium part cap; 0: the platform's
}

// New builds an Emulator from opts.Seed. Call Start to serve.
func New(opts Options) (*Emulator, error) {
	if opts.Seed == nil {
		return nil, errors.New("emulator: Options.Seed is required")
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.LoginCode == "" {
		opts.LoginCode = DefaultLoginCode
	}
	if opts.ReadTimeout == 0 {
		opts.ReadTimeout = time.Hour
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.UploadPartLife == 0 {
		opts.UploadPartLife = time.Hour
	}
	if opts.CallbackTimeout <= 0 {
		opts.CallbackTimeout = 15 * time.Second
	}
	e := &Emulator{
		opts: opts, log: opts.Logger.With("component", "emulator"),
		users: map[int64]*user{}, phones: map[string]*user{}, usernames: map[string]int64{},
		invites: map[string]*channel{}, channels: map[int64]*channel{}, docs: map[int64]*document{},
		photos: map[int64]*photo{}, auth: map[[8]byte]int64{}, sessions: map[int64]map[int64]mainSession{},
		exports: map[string]exportedAuth{}, exportWindows: map[int64]*window{}, exportFlood: opts.ExportFlood.withDefaults(),
		keyConns: map[[8]byte]map[*keyConn]bool{}, killed: map[[8]byte]*killedKey{},
		codes: map[string]string{}, uploads: map[string]*upload{}, randomIDs: map[string]int{},
		calls: map[string]int{}, refusals: map[string]int{}, perSecond: map[int64]*secondCount{}, dropPush: map[int64]int{}, srp: map[int64]*srpSession{}, awaiting2FA: map[[8]byte]int64{},
		queries: map[int64]*callbackQuery{}, flood: opts.BotFlood.withDefaults(), floodBuckets: map[int64]*bucket{},
		botForwards: map[int64][]time.Time{},
	}
	e.dir = opts.StateDir
	if e.dir == "" {
		d, err := os.MkdirTemp("", "hoard-emulator-")
		if err != nil {
			return nil, fmt.Errorf("emulator: state dir: %w", err)
		}
		e.dir, e.tmpDir = d, true
	}
	for _, sub := range []string{"uploads", "files"} {
		if err := os.MkdirAll(filepath.Join(e.dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("emulator: state dir: %w", err)
		}
	}
	if err := e.build(opts.Seed); err != nil {
		return nil, fmt.Errorf("emulator: build world: %w", err)
	}
	e.seeded = map[int64]int{}
	for id, c := range e.channels {
		e.seeded[id] = len(c.msgs)
	}
	if err := e.load(); err != nil {
		return nil, fmt.Errorf("emulator: load state: %w", err)
	}
	e.dirty = false
	for _, f := range opts.Seed.Faults {
		ft, err := e.seedFault(f)
		if err != nil {
			return nil, fmt.Errorf("emulator: %w", err)
		}
		e.InjectFault(ft)
	}
	key := opts.Key
	if key == nil {
		var err error
		if key, err = loadOrCreateKey(filepath.Join(e.dir, "server-key.pem")); err != nil {
			return nil, fmt.Errorf("emulator: server key: %w", err)
		}
	}
	e.key = key
	if e.opts.RoundTrip == nil {
		e.opts.RoundTrip = DefaultRoundTrip()
	}
	e.opts.RoundTrip = maps.Clone(e.opts.RoundTrip)
	for dc, ms := range opts.Seed.RoundTripMS {
		e.opts.RoundTrip[dc] = time.Duration(ms) * time.Millisecond
	}
	e.newDataCentres(exchange.PrivateKey{RSA: key}, tgtest.UnpackInvoke(tgtest.HandlerFunc(e.onMessage)))
	return e, nil
}

func loadOrCreateKey(path string) (*rsa.PrivateKey, error) {
	if data, err := os.ReadFile(path); err == nil {
		block, _ := pem.Decode(data)
		if block == nil {
			return nil, fmt.Errorf("%s: no PEM block", path)
		}
		return x509.ParsePKCS1PrivateKey(block.Bytes)
	}
	key, err := rsa.GenerateKey(rand.Reader, crypto.RSAKeyBits)
	if err != nil {
		return nil, err
	}
	data := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	return key, os.WriteFile(path, data, 0o600)
}

// GenerateKey returns a fresh server key; tests share one across emulators
// to skip the RSA generation.
func GenerateKey() (*rsa.PrivateKey, error) {
	return rsa.GenerateKey(rand.Reader, crypto.RSAKeyBits)
}

// Start listens (the entry DC on Options.Addr, the others on
// Options.DCAddrs or free ports) and serves until Close or ctx ends.
func (e *Emulator) Start(ctx context.Context) error {
	ctx, e.cancel = context.WithCancel(ctx)
	if err := e.listen(ctx); err != nil {
		e.stop()
		return err
	}
	e.log.Info("emulator listening", "addr", e.Addr(), "dcs", NumDCs)
	return nil
}

// Run makes an emulator and starts it (New, then Start), closing it when it
// cannot listen.
func Run(ctx context.Context, opts Options) (*Emulator, error) {
	em, err := New(opts)
	if err != nil {
		return nil, err
	}
	if err := em.Start(ctx); err != nil {
		_ = em.Close()
		return nil, err
	}
	return em, nil
}

// stop stops serving and waits a few seconds at most for the DCs to end.
func (e *Emulator) stop() {
	e.cancel()
	wait, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for _, dc := range e.dcs[1:] {
		if dc.ln == nil {
			continue
		}
		_ = dc.ln.Close()
		select {
		case <-dc.done:
		case <-wait.Done():
			e.log.Warn("emulator: clients still connected at shutdown; not waiting for them", "dc", dc.id)
		}
	}
}

// Close stops serving and removes a temporary state directory. The world is
// saved after every change, so Close waits at most a few seconds for client
// connections that are still open (tgtest serves them until their read
// timeout) rather than hang.
func (e *Emulator) Close() error {
	if e.cancel != nil {
		e.stop()
	}
	if e.tmpDir {
		return os.RemoveAll(e.dir)
	}
	return nil
}

// Addr returns the entry DC's listen address (host:port) after Start.
func (e *Emulator) Addr() string { return e.dcs[EntryDC].ln.Addr().String() }

// DCAddr returns DC dc's listen address after Start.
func (e *Emulator) DCAddr(dc int) string { return e.dcs[dc].ln.Addr().String() }

// Info is what a client needs to connect; its JSON form is the emulator info
// file read by messenger/telegram.
type Info struct {
	// Addr and DC are the entry DC clients connect to first; DCs lists
	// every DC (help.getConfig tells connected clients the same).
	Addr       string   `json:"addr"`
	DC         int      `json:"dc"`
	DCs        []InfoDC `json:"dcs,omitempty"`
	PublicKeys []string `json:"public_keys"`
	Phone      string   `json:"phone"`
	Code       string   `json:"code"`
	BotToken   string   `json:"bot_token"`
	// BotUsername is the bot's username (users start a chat with it).
	BotUsername string `json:"bot_username,omitempty"`
	// Users are the seed's extra users, who sign in with Code to talk to
	// the bot.
	Users []InfoUser `json:"users,omitempty"`
}

// InfoDC is one DC of the info file.
type InfoDC struct {
	ID   int    `json:"id"`
	Addr string `json:"addr"`
}

// InfoUser is a seeded user of the info file.
type InfoUser struct {
	Phone     string `json:"phone"`
	Username  string `json:"username,omitempty"`
	FirstName string `json:"first_name,omitempty"`
}

// Info returns the connection info; call after Start.
func (e *Emulator) Info() Info {
	pub := pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&e.key.PublicKey)})
	info := Info{
		Addr: e.Addr(), DC: EntryDC, PublicKeys: []string{string(pub)},
		Phone: "+" + e.account.phone, Code: e.opts.LoginCode, BotToken: e.opts.Seed.Bot.Token,
	}
	for id := 1; id <= NumDCs; id++ {
		info.DCs = append(info.DCs, InfoDC{ID: id, Addr: e.DCAddr(id)})
	}
	if e.bot != nil {
		info.BotUsername = e.bot.username
	}
	for _, u := range e.seededUsers {
		info.Users = append(info.Users, InfoUser{Phone: "+" + u.phone, Username: u.username, FirstName: u.firstName})
	}
	return info
}

// UserID returns the id of the user (the account or a seeded user) with
// this phone number, 0 if none.
func (e *Emulator) UserID(phone string) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if u := e.phones[normPhone(phone)]; u != nil {
		return u.id
	}
	return 0
}

// WriteInfo writes the info file (JSON) to path with mode 0600; it holds the
// login code and bot token of the demo world.
func (e *Emulator) WriteInfo(path string) error {
	data, err := json.MarshalIndent(e.Info(), "", "  ")
	if err != nil {
		return fmt.Errorf("emulator: info: %w", err)
	}
	// Atomic: a client polling for the file never reads half of it.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("emulator: write info: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("emulator: write info: %w", err)
	}
	return nil
}

// Calls returns how many times method (e.g. "upload.getFile") was called.
func (e *Emulator) Calls(method string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls[method]
}

// secondCount counts one user's requests per calendar second.
type secondCount struct {
	second int64 // Unix time of the current second
	n      int   // requests in it
	most   int   // requests in the busiest second so far
}

// countSecond counts a request of user uid; e.mu is held.
func (e *Emulator) countSecond(uid int64) {
	c := e.perSecond[uid]
	if c == nil {
		c = &secondCount{}
		e.perSecond[uid] = c
	}
	if now := time.Now().Unix(); now != c.second {
		c.second, c.n = now, 0
	}
	c.n++
	c.most = max(c.most, c.n)
}

// MostRequestsPerSecond returns, per signed-in user (by phone with its
// "+", or "@" and the username for bots), the most requests the user's sessions made together
// in one calendar second: what a per-account rate limit is measured
// against. Requests before sign-in count for nobody.
func (e *Emulator) MostRequestsPerSecond() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]int, len(e.perSecond))
	for uid, c := range e.perSecond {
		if u := e.users[uid]; u != nil {
			name := "+" + u.phone
			if u.phone == "" {
				name = "@" + u.username
			}
			out[name] = c.most
		}
	}
	return out
}

// Refusals returns how many errors were answered, by "method:ERROR_TYPE"
// (e.g. "upload.getFile:FILE_MIGRATE", "messages.getHistory:FLOOD_WAIT").
func (e *Emulator) Refusals() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.refusals)
}

// ResetCalls zeroes every call and refusal counter.
func (e *Emulator) ResetCalls() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = map[string]int{}
	e.refusals = map[string]int{}
	e.perSecond = map[int64]*secondCount{}
}

// SetLatency delays every answer by d (0 disables).
func (e *Emulator) SetLatency(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.latency = d
}

// ExpireFileReferences invalidates every file reference handed out so far:
// clients get FILE_REFERENCE_EXPIRED until they re-fetch the message.
func (e *Emulator) ExpireFileReferences() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, d := range e.docs {
		d.refVer++
	}
	for _, p := range e.photos {
		p.refVer++
	}
}

// AccountID returns the seeded account's user id.
func (e *Emulator) AccountID() int64 { return e.account.id }

// BotID returns the bot's user id (0 without a bot).
func (e *Emulator) BotID() int64 {
	if e.bot == nil {
		return 0
	}
	return e.bot.id
}

// DestinationID returns the destination channel's id.
func (e *Emulator) DestinationID() int64 { return e.dest.id }

// ChannelID returns the id of the seeded channel with this title (0 if none).
func (e *Emulator) ChannelID(title string) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.channels {
		if c.title == title {
			return c.id
		}
	}
	return 0
}

// Documents returns the ids of a channel's posts that hold a document and
// are not deleted, in ascending order (none for an unknown channel).
func (e *Emulator) Documents(channelID int64) []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.channels[channelID]
	if c == nil {
		return nil
	}
	var ids []int
	for _, m := range c.msgs {
		if m.doc != 0 && !m.deleted {
			ids = append(ids, m.id)
		}
	}
	return ids
}

// SetMember adds the account to a channel or removes it (a kick).
func (e *Emulator) SetMember(channelID int64, member bool) error {
	return e.changeWorld(func() error {
		c := e.channels[channelID]
		if c == nil {
			return fmt.Errorf("emulator: no channel %d", channelID)
		}
		if member {
			if c.members[e.account.id] == roleNone {
				c.members[e.account.id] = roleMember
			}
		} else {
			delete(c.members, e.account.id)
		}
		return nil
	})
}

// SendToBot delivers a private text message from the account to the bot, as
// if typed in a client, and pushes it to the bot.
func (e *Emulator) SendToBot(ctx context.Context, text string) error {
	e.mu.Lock()
	if e.bot == nil {
		e.mu.Unlock()
		return errors.New("emulator: no bot")
	}
	c := &call{e: e, ctx: ctx, user: e.account, method: "emulator.SendToBot"}
	res, pend := e.sendPrivate(c, e.account, e.bot, &message{text: text, date: int(time.Now().Unix())})
	_, pushes, err := c.finishAndSave(res, pend, nil)
	if err != nil {
		return err
	}
	c.deliver(pushes)
	return nil
}

// PrivateMessages returns the texts of the account's private messages with
// the bot, oldest first (for assertions on bot replies).
func (e *Emulator) PrivateMessages() []PrivateMessage {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []PrivateMessage
	for _, m := range e.account.box {
		pm := PrivateMessage{ID: m.id, Out: m.out, Text: m.text, ForwardedPost: m.fwdPost, HasDocument: m.doc != 0, HasPhoto: m.photo != 0}
		for _, ent := range m.entities {
			pm.Entities = append(pm.Entities, ent.TypeName())
		}
		if m.markup != nil {
			for _, row := range m.markup.Rows {
				for _, b := range row.Buttons {
					pm.Buttons = append(pm.Buttons, b.Text)
				}
			}
		}
		out = append(out, pm)
	}
	return out
}

// PrivateMessage is a message of the account's private box.
type PrivateMessage struct {
	ID            int
	Out           bool
	Text          string
	Entities      []string
	Buttons       []string // inline keyboard button texts, row by row
	ForwardedPost int
	HasDocument   bool
	HasPhoto      bool
}

// Fault makes matching requests fail, stall or drop the connection.
type Fault struct {
	// Method is the TL method name, e.g. "upload.getFile".
	Method string
	// ChannelID, when set, matches only requests naming that channel.
	ChannelID int64
	// Match, when set, must also accept the decoded request.
	Match func(req bin.Object) bool
	// Error is the platform error to answer, e.g. "FLOOD_WAIT_3"; its code is
	// derived (420 for FLOOD_*, 401 for AUTH_KEY_*/SESSION_*, 500 for
	// INTERNAL*, else 400).
	Error string
	// Stall delays the answer.
	Stall time.Duration
	// Drop closes the client's connection instead of answering.
	Drop bool
	// DropAnswer carries the request out (updates are pushed as usual) and
	// then sends no answer: "sent, but we never heard back". The client
	// times out and retries; random ids must keep the retry from
	// delivering twice.
	DropAnswer bool
	// After lets this many matching calls pass first.
	After int
	// Times is how many calls are affected; 0 means every call.
	Times int
}

type fault struct {
	Fault
	seen, fired int
}

// InjectFault adds a fault; faults are checked in insertion order and the
// first that fires wins.
func (e *Emulator) InjectFault(f Fault) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = append(e.faults, &fault{Fault: f})
}

// ClearFaults removes every fault.
func (e *Emulator) ClearFaults() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.faults = nil
}

func (e *Emulator) seedFault(f SeedFault) (Fault, error) {
	ft := Fault{Method: f.Method, Error: f.Error, Stall: time.Duration(f.StallMS) * time.Millisecond,
		Drop: f.Drop, DropAnswer: f.DropAnswer, After: f.After, Times: f.Times}
	if f.Channel != "" {
		id, ok := e.usernames[strings.ToLower(f.Channel)]
		if !ok {
			if c := e.invites[strings.TrimPrefix(f.Channel, "+")]; c != nil {
				id = c.id
			} else {
				return ft, fmt.Errorf("fault: unknown channel %q", f.Channel)
			}
		}
		ft.ChannelID = id
	}
	if f.File != "" {
		name := f.File
		// Match runs with e.mu held.
		ft.Match = func(req bin.Object) bool {
			r, ok := req.(*tg.UploadGetFileRequest)
			if !ok {
				return false
			}
			loc, ok := r.Location.(*tg.InputDocumentFileLocation)
			if !ok {
				return false
			}
			d := e.docs[loc.ID]
			return d != nil && d.name == name
		}
	}
	return ft, nil
}

func errorCode(name string) int {
	switch {
	case strings.HasPrefix(name, "FLOOD_"):
		return 420
	case name == "AUTH_KEY_DUPLICATED":
		return 406
	case strings.HasSuffix(strings.TrimRight(name, "0123456789"), "_MIGRATE_"):
		return 303
	case strings.HasPrefix(name, "AUTH_KEY_"), strings.HasPrefix(name, "SESSION_"), name == "USER_DEACTIVATED":
		return 401
	case strings.HasPrefix(name, "INTERNAL"):
		return 500
	case name == "CHAT_WRITE_FORBIDDEN", name == "CHAT_ADMIN_REQUIRED":
		return 403
	}
	return 400
}

// Method registry from gotd's TL tables.
var (
	methodNames  = map[uint32]string{}
	methodIDs    = map[string]uint32{}
	constructors = tg.TypesConstructorMap()
)

func init() {
	for id, name := range tg.TypesMap() {
		n, _, _ := strings.Cut(name, "#")
		methodNames[id] = n
	}
	for n, id := range tg.NamesMap() {
		methodIDs[n] = id
	}
}

// requestChannel extracts the channel a request names, if any.
func requestChannel(obj bin.Object) (int64, bool) {
	var in any
	switch r := obj.(type) {
	case interface{ GetChannel() tg.InputChannelClass }:
		in = r.GetChannel()
	case interface{ GetPeer() tg.InputPeerClass }:
		in = r.GetPeer()
	case *tg.MessagesForwardMessagesRequest:
		in = r.FromPeer
	case *tg.ChannelsGetChannelsRequest:
		if len(r.ID) == 1 {
			in = r.ID[0]
		}
	}
	switch v := in.(type) {
	case *tg.InputChannel:
		return v.ChannelID, true
	case *tg.InputPeerChannel:
		return v.ChannelID, true
	}
	return 0, false
}

// raw is a pre-encoded TL object.
type raw []byte

func (r raw) Encode(b *bin.Buffer) error { b.Put(r); return nil }

func encode(obj bin.Encoder) (raw, error) {
	var b bin.Buffer
	if err := obj.Encode(&b); err != nil {
		return nil, err
	}
	return raw(b.Buf), nil
}

// call is one request being served.
type call struct {
	e   *Emulator
	ctx context.Context
	req *tgtest.Request
	// dc is the DC the request came to, srv that DC's server.
	dc      int
	srv     *tgtest.Server
	method  string
	user    *user
	session tgtest.Session
	// change is the number of the change this call made (0: none); it is
	// on disk when persist(change) returns.
	change uint64
}

// onMessage is the tgtest handler: it acknowledges, decodes synchronously
// (req.Buf is reused by the read loop) and serves in a goroutine, so one
// slow request never blocks the connection.
func (e *Emulator) onMessage(srv *tgtest.Server, req *tgtest.Request) error {
	id, err := req.Buf.PeekID()
	if err != nil {
		return err
	}
	if answer, forget, ok, err := serviceMessage(id, req.Buf); ok {
		return e.answerService(srv, req, answer, forget, err)
	}
	_ = srv.SendAck(req.RequestCtx, req.Session, req.MsgID)
	name := methodNames[id]
	ctor := constructors[id]
	if ctor == nil || name == "" {
		e.log.Error("emulator: unknown request type", "type_id", fmt.Sprintf("%#x", id))
		return srv.SendErr(req, tgerr.New(400, "INPUT_METHOD_INVALID"))
	}
	obj := ctor()
	if err := obj.Decode(req.Buf); err != nil {
		e.log.Error("emulator: decode request", "method", name, "error", err)
		return srv.SendErr(req, tgerr.New(400, "INPUT_REQUEST_INVALID"))
	}
	r := *req
	r.Buf = nil
	go e.serve(&r, name, obj)
	return nil
}

// answerService sends a service message's answer and forgets a destroyed
// session; a malformed one is logged, never answered as a call.
func (e *Emulator) answerService(srv *tgtest.Server, req *tgtest.Request, answer bin.Encoder, forget int64, err error) error {
	if err != nil {
		e.log.Warn("emulator: malformed service message", "error", err)
		return nil
	}
	if info, ok := answer.(*mt.MsgsStateInfo); ok {
		info.ReqMsgID = req.MsgID
	}
	if forget != 0 {
		e.mu.Lock()
		for _, sessions := range e.sessions {
			delete(sessions, forget)
		}
		e.mu.Unlock()
	}
	if answer == nil {
		return nil
	}
	return srv.Send(req.RequestCtx, req.Session, tgtest.MessageFromServer, answer)
}

func (e *Emulator) serve(req *tgtest.Request, name string, obj bin.Object) {
	dc := e.dcs[req.DC]
	c := &call{e: e, ctx: req.RequestCtx, req: req, dc: dc.id, srv: dc.srv, method: name, session: req.Session}
	e.mu.Lock()
	e.calls[name]++
	if err := e.duplicated(req.Session.AuthKey.ID, req.Session.ID); err != nil {
		e.mu.Unlock()
		c.fail(err)
		return
	}
	if uid, ok := e.auth[req.Session.AuthKey.ID]; ok {
		c.user = e.users[uid]
		e.countSecond(uid)
	}
	var fired *fault
	chID, hasCh := requestChannel(obj)
	for _, f := range e.faults {
		if f.Method != name || (f.Times > 0 && f.fired >= f.Times) {
			continue
		}
		if f.ChannelID != 0 && (!hasCh || chID != f.ChannelID) {
			continue
		}
		if f.Match != nil && !f.Match(obj) {
			continue
		}
		f.seen++
		if f.seen <= f.After {
			continue
		}
		f.fired++
		fired = f
		break
	}
	latency := e.latency + dc.rtt
	e.mu.Unlock()

	if latency > 0 && !sleep(c.ctx, latency) {
		return
	}
	if fired != nil {
		e.log.Info("emulator: fault", "method", name, "error", fired.Error, "stall", fired.Stall, "drop", fired.Drop,
			"drop_answer", fired.DropAnswer)
		if fired.Stall > 0 && !sleep(c.ctx, fired.Stall) {
			return
		}
		if fired.Drop {
			c.srv.ForceDisconnect(req.Session)
			return
		}
		if fired.Error != "" {
			if fired.Error == "AUTH_KEY_DUPLICATED" {
				e.mu.Lock()
				e.killKey(req.Session.AuthKey.ID, "a fault said so")
				e.killed[req.Session.AuthKey.ID].told[req.Session.ID] = true
				e.mu.Unlock()
			}
			c.fail(tgerr.New(errorCode(fired.Error), fired.Error))
			return
		}
	}
	dropAnswer := fired != nil && fired.DropAnswer
	h := handlers[name]
	if h == nil {
		e.log.Error("emulator: UNIMPLEMENTED METHOD called; answering INPUT_METHOD_INVALID", "method", name)
		c.fail(tgerr.New(400, "INPUT_METHOD_INVALID"))
		return
	}
	if c.user == nil && !strings.HasPrefix(name, "auth.") && !strings.HasPrefix(name, "help.") && name != "account.getPassword" {
		c.fail(tgerr.New(401, "AUTH_KEY_UNREGISTERED"))
		return
	}
	if err := onForeignDC(name, c.user, c.dc); err != nil {
		c.fail(err)
		return
	}
	if c.user != nil && c.user.bot && userOnlyMethods[name] {
		c.fail(tgerr.New(400, "BOT_METHOD_INVALID"))
		return
	}
	if err := e.userFlood(c, obj); err != nil {
		c.fail(err)
		return
	}
	res, push, err := h(c, obj)
	switch {
	case dropAnswer:
		e.log.Info("emulator: fault: answer dropped", "method", name, "error", err)
		c.deliver(push)
		return
	case err != nil:
		c.fail(err)
		return
	}
	if err := c.srv.SendResult(req, res); err != nil {
		e.log.Debug("emulator: send result", "method", name, "error", err)
	}
	c.deliver(push)
}

// fail answers the call with err, a platform error (anything else is
// logged and answered 500 INTERNAL), and counts the refusal.
func (c *call) fail(err error) {
	var rpcErr *tgerr.Error
	if !errors.As(err, &rpcErr) {
		c.e.log.Error("emulator: internal error", "method", c.method, "error", err)
		rpcErr = tgerr.New(500, "INTERNAL")
	}
	c.e.mu.Lock()
	c.e.refusals[c.method+":"+rpcErr.Type]++
	c.e.mu.Unlock()
	if err := c.srv.SendErr(c.req, rpcErr); err != nil {
		c.e.log.Debug("emulator: send error", "method", c.method, "error", err)
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// push is an update for one user, pre-encoded under e.mu.
type push struct {
	userID int64
	data   raw
}

// LosePushes makes the next n pushed updates to a user vanish, as on a flaky
// network; the client must notice the pts gap and call getDifference.
func (e *Emulator) LosePushes(userID int64, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.dropPush[userID] = n
}

// deliver sends pushes to every tracked main session of each recipient.
// Sessions that cannot be reached are forgotten (their client recovers with
// getDifference).
func (c *call) deliver(pushes []push) {
	for _, p := range pushes {
		c.e.mu.Lock()
		var targets []mainSession
		for _, s := range c.e.sessions[p.userID] {
			targets = append(targets, s)
		}
		if c.e.dropPush[p.userID] > 0 {
			c.e.dropPush[p.userID]--
			targets = nil
		}
		c.e.mu.Unlock()
		for _, s := range targets {
			if err := c.e.dcs[s.dc].srv.Send(context.Background(), s.Session, tgtest.MessageFromServer, p.data); err != nil {
				c.e.mu.Lock()
				delete(c.e.sessions[p.userID], s.ID)
				c.e.mu.Unlock()
			}
		}
	}
}

// mainSession is a client's main session, to which updates are pushed,
// and the DC it is connected to.
type mainSession struct {
	tgtest.Session
	dc int
}

// track remembers the caller's session as a main session for pushes.
// Called under e.mu.
func (c *call) track() {
	if c.user == nil {
		return
	}
	m := c.e.sessions[c.user.id]
	if m == nil {
		m = map[int64]mainSession{}
		c.e.sessions[c.user.id] = m
	}
	m[c.session.ID] = mainSession{Session: c.session, dc: c.dc}
}

// Serve runs an emulator until ctx ends: the standalone form used by the
// `emulator` and `demo` commands. It writes the info file (when infoPath is
// set) once listening, so clients can be started from it.
func Serve(ctx context.Context, opts Options, infoPath string) error {
	e, err := New(opts)
	if err != nil {
		return err
	}
	if err := e.Start(ctx); err != nil {
		_ = e.Close()
		return err
	}
	defer e.Close()
	if infoPath != "" {
		if err := e.WriteInfo(infoPath); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return nil
}

// CallCounts returns how many times each method was called.
func (e *Emulator) CallCounts() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]int, len(e.calls))
	for k, v := range e.calls {
		out[k] = v
	}
	return out
}

// AccountAccessHash returns the access hash the seeded account sees for a
// channel. `hoard demo` uses it to set up the destination and the seeded
// channels without an administrator pasting links; the platform has no such
// call.
func (e *Emulator) AccountAccessHash(channelID int64) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.accessHash(e.account.id, channelID)
}
