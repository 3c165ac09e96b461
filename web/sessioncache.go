package web

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hoard/hoard"
)

// defaultSessionCacheTTL is how long a signed-in request's session and
// user are served from memory when Deps.SessionCacheTTL is zero. Every
// change to them drops them all: a signed-in user's state-changing request
// in this process before it answers (sessionCache.beginWrite), any other
// change through the auth_changed notification (migration 040). The TTL
// only bounds what a lost notification could leave behind.
const defaultSessionCacheTTL = 5 * time.Second

// sessionCacheEntries bounds the sessions held (a few hundred bytes each);
// the map is emptied when full.
const sessionCacheEntries = 10_000

// sessionCache keeps the sessions (with their users) that recent requests
// brought, so that a page or API call answered from memory does not also
// cost a database round trip to learn who asks: under load that query was
// a third of the machine's work per cached page (README). Entries are only
// kept while this process listens for auth_changed, so that a sign-out,
// a role taken away or a deleted account elsewhere takes effect within the
// notification's delay; never past a session's expiry; never a failed
// look-up. Safe for concurrent use.
type sessionCache struct {
	ttl time.Duration // <= 0: no caching

	mu        sync.Mutex
	listening bool   // auth_changed is listened for: entries may be kept
	gen       uint64 // bumped by forget: look-ups begun before are not kept
	writing   int    // state-changing requests of signed-in users under way
	entries   map[string]sessionEntry
	looking   sharedLoads[string, sessionEntry] // look-ups under way that others may join

	hits   atomic.Int64 // sessions answered from memory
	joined atomic.Int64 // look-ups a request waited for rather than made
}

type sessionEntry struct {
	sess hoard.Session
	user hoard.User
	at   time.Time
}

func newSessionCache(ttl time.Duration) *sessionCache {
	return &sessionCache{ttl: ttl, entries: map[string]sessionEntry{}, looking: sharedLoads[string, sessionEntry]{}}
}

// find returns the session id and its user: from memory when held (get),
// else from load, whose result is kept (keep). Requests that miss one
// session while its look-up is under way wait for that look-up instead of
// making their own: a page's session leaves memory every TTL, and the
// requests of one browser (or, at start, of everyone) that arrive during
// the round trip would otherwise all ask PostgreSQL at once, each holding
// a connection or opening one (at start that was half a second of
// fifty clients' requests, README). A request joins only a look-up whose
// result could be kept: begun since the last change (gen), while changes
// are listened for and no write is under way. It waits no longer than its
// own context; the look-up outlives its first caller's.
func (c *sessionCache) find(ctx context.Context, id string, load func(context.Context) (*hoard.Session, *hoard.User, error)) (*hoard.Session, *hoard.User, error) {
	if c.ttl <= 0 {
		return load(ctx)
	}
	if sess, user, ok := c.get(id); ok {
		return sess, user, nil
	}
	c.mu.Lock()
	gen, shareable := c.gen, c.listening && c.writing == 0
	if call, running := c.looking[id]; running && shareable && call.gen == gen {
		c.mu.Unlock()
		c.joined.Add(1)
		e, err := call.wait(ctx)
		if err != nil {
			return nil, nil, err
		}
		return &e.sess, &e.user, nil // e is this request's copy
	}
	if !shareable {
		c.mu.Unlock()
		return load(ctx) // nor would its result be kept (keep)
	}
	call := c.looking.begin(id, gen)
	c.mu.Unlock()
	e, err := c.looking.run(ctx, &c.mu, id, call, func(ctx context.Context) (sessionEntry, error) {
		sess, user, err := load(ctx)
		if err != nil {
			return sessionEntry{}, err
		}
		return sessionEntry{sess: *sess, user: *user, at: time.Now()}, nil
	}, func(e sessionEntry) { c.keep(id, gen, e) })
	if err != nil {
		return nil, nil, err
	}
	return &e.sess, &e.user, nil
}

// get returns a copy of the session id and its user when held, fresh and
// unexpired; otherwise ok is false.
func (c *sessionCache) get(id string) (sess *hoard.Session, user *hoard.User, ok bool) {
	if c.ttl <= 0 {
		return nil, nil, false
	}
	c.mu.Lock()
	e, held := c.entries[id]
	usable := held && c.listening && c.writing == 0
	c.mu.Unlock()
	now := time.Now()
	if !usable || now.Sub(e.at) >= c.ttl || !now.Before(e.sess.ExpiresAt) {
		return nil, nil, false
	}
	c.hits.Add(1)
	s, u := e.sess, e.user
	return &s, &u, true
}

// keep keeps what a look-up begun at gen found, unless something changed
// meanwhile (forget), a signed-in user's state-changing request is under
// way, or nobody listens for changes; c.mu is held.
func (c *sessionCache) keep(id string, gen uint64, e sessionEntry) {
	if gen != c.gen || c.writing > 0 || !c.listening {
		return
	}
	if len(c.entries) >= sessionCacheEntries {
		clear(c.entries)
	}
	c.entries[id] = e
}

// drop forgets one session (touched: its last activity moved).
func (c *sessionCache) drop(id string) {
	c.mu.Lock()
	delete(c.entries, id)
	c.mu.Unlock()
}

// forget drops every session held.
func (c *sessionCache) forget() {
	c.mu.Lock()
	c.gen++
	clear(c.entries)
	c.mu.Unlock()
}

// setListening records whether auth_changed is listened for; either way
// what was held is dropped (changes meanwhile went unannounced).
func (c *sessionCache) setListening(on bool) {
	c.mu.Lock()
	c.listening = on
	c.gen++
	clear(c.entries)
	c.mu.Unlock()
}

// beginWrite marks a signed-in user's state-changing request (it may sign
// out, change a role or a password, delete an account, unlink a messenger
// account): until its endWrite, every request looks its session up afresh
// and nothing is kept, so that no request, not even one racing its
// response, is answered with what it changed. endWrite drops everything
// held.
func (c *sessionCache) beginWrite() {
	c.mu.Lock()
	c.writing++
	c.gen++
	c.mu.Unlock()
}

// endWrite ends what beginWrite began.
func (c *sessionCache) endWrite() {
	c.mu.Lock()
	c.writing--
	c.gen++
	clear(c.entries)
	c.mu.Unlock()
}
