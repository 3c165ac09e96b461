// Package sessionlease makes sure that no messaging session — an auth key
// stored in messenger_sessions — is used by two processes at once. The
// platform answers 406 AUTH_KEY_DUPLICATED to a key used from two places at
// the same time and the key is dead from then on: the account is signed
// out (notes, telegram.md §11). So a process uses a session only while it
// holds the session's lease, a row in PostgreSQL's leases table that it
// renews; another process that wants the session waits for the lease to be
// released (when the holder closes its client) or to expire (when the
// holder died). A holder that cannot renew in time stops using the session
// before the lease can expire: Lost is closed and the client must close.
//
// hoard's account sessions are held by one process at a time (its work is
// routed there: other processes snooze that account's jobs); each bot
// process holds a session of its own (BotSlots).
package sessionlease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
)

// ErrBusy is matched (errors.Is) by the error of Take when another process
// holds the session: messenger.ErrSessionBusy, whose code is a rate limit
// (jobs snooze on it, no attempt spent).
var ErrBusy = messenger.ErrSessionBusy

// DefaultTTL is how long a lease lives without renewal: how long a crashed
// process's sessions stay reserved before another process may take them.
const DefaultTTL = 20 * time.Second

// Holder holds this process's leases. Its methods are safe for concurrent
// use.
type Holder struct {
	db  *store.DB
	id  string
	ttl time.Duration
	log *slog.Logger

	mu   sync.Mutex
	held map[string]*Lease
}

// Lease is one session held by this process. A goroutine of its own
// renews it until it is released or lost.
type Lease struct {
	h    *Holder
	key  string
	lost chan struct{}
	// stop ends the keeper; kept is closed when it has ended.
	stop context.CancelFunc
	kept chan struct{}
	// gone is guarded by Holder.mu.
	gone bool
}

// Renewal timing, as fractions of the ttl: a lease is renewed every
// ttl/renewEvery; a renewal that has not succeeded ttl/lostAfter after
// the last successful one was sent gives the lease up (Lost), so the
// client has the rest of the ttl — half of it — to close before another
// process can take the session.
const (
	renewEvery = 5
	lostAfter  = 2
)

// New returns a Holder for this process, named process (WORKER_ID) plus the
// process id and a random suffix, so that no other process, also a
// restarted one, has its name. ttl <= 0 means DefaultTTL.
func New(db *store.DB, process string, ttl time.Duration, log *slog.Logger) *Holder {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if log == nil {
		log = slog.Default()
	}
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	id := process + "/" + strconv.Itoa(os.Getpid()) + "/" + hex.EncodeToString(nonce[:])
	return &Holder{db: db, id: id, ttl: ttl, log: log, held: map[string]*Lease{}}
}

// ID is the name this process holds leases under.
func (h *Holder) ID() string { return h.id }

func leaseName(key string) string { return "session:" + key }

// Take takes the lease of session key, or returns an error matching ErrBusy
// (naming the holder) when another process holds it. Taking a lease this
// process holds already returns it.
func (h *Holder) Take(ctx context.Context, key string) (*Lease, error) {
	h.mu.Lock()
	if l := h.held[key]; l != nil && !l.gone {
		h.mu.Unlock()
		return l, nil
	}
	h.mu.Unlock()
	sent := time.Now()
	ok, err := h.db.AcquireLease(ctx, leaseName(key), h.id, h.ttl)
	if err != nil {
		return nil, fmt.Errorf("take the lease of session %s: %w", key, err)
	}
	if !ok {
		holder, _ := h.db.LeaseHolder(ctx, leaseName(key))
		return nil, fmt.Errorf("session %s is held by %s: %w", key, holder, ErrBusy)
	}
	kctx, stop := context.WithCancel(context.Background())
	l := &Lease{h: h, key: key, lost: make(chan struct{}), stop: stop, kept: make(chan struct{})}
	h.mu.Lock()
	h.held[key] = l
	h.mu.Unlock()
	go l.keep(kctx, sent)
	return l, nil
}

// Wait takes the lease of session key, waiting for its holder to release
// it or for it to expire, until ctx ends.
func (h *Holder) Wait(ctx context.Context, key string) (*Lease, error) {
	return retryBusy(ctx, "session "+key, func() (*Lease, error) { return h.Take(ctx, key) })
}

// retryBusy calls take every second while it answers ErrBusy, until ctx
// ends (what names the wait in that error).
func retryBusy(ctx context.Context, what string, take func() (*Lease, error)) (*Lease, error) {
	for {
		l, err := take()
		if !errors.Is(err, ErrBusy) {
			return l, err
		}
		if !sleep(ctx, time.Second) {
			return nil, fmt.Errorf("wait for %s: %w", what, ctx.Err())
		}
	}
}

// sleep waits d or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Key is the session the lease is of.
func (l *Lease) Key() string { return l.key }

// Lost is closed when the lease could not be renewed in time: the client
// of the session must close at once (another process may take it soon).
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Ended is closed when the lease is no longer held: released, or lost
// (then Lost is closed first).
func (l *Lease) Ended() <-chan struct{} { return l.kept }

// Release gives the lease up; call it after the session's client closed,
// so that another process may take it at once. Releasing twice is harmless.
func (l *Lease) Release(ctx context.Context) {
	h := l.h
	l.stop()
	<-l.kept // no renewal after the release puts the lease back
	h.mu.Lock()
	if l.gone {
		h.mu.Unlock()
		return
	}
	l.gone = true
	delete(h.held, l.key)
	h.mu.Unlock()
	if err := h.db.ReleaseLease(ctx, leaseName(l.key), h.id); err != nil {
		h.log.Warn("release a session lease (it expires by itself)", "session", l.key, "err", err)
	}
}

// keep renews the lease every ttl/renewEvery until ctx ends (Release).
// renewed is when the last successful renewal was sent: the lease lasts
// at least ttl from then.
func (l *Lease) keep(ctx context.Context, renewed time.Time) {
	defer close(l.kept)
	for sleep(ctx, l.h.ttl/renewEvery) {
		var ok bool
		if renewed, ok = l.renew(ctx, renewed); !ok {
			return
		}
	}
}

// renew renews the lease, retrying until it succeeds or until ttl/lostAfter
// after renewed: then, or when another process holds the lease, the lease
// is lost (Lost closes, false). The deadline bounds the database call
// itself, so a database that hangs cannot hold the client past it.
func (l *Lease) renew(ctx context.Context, renewed time.Time) (time.Time, bool) {
	h := l.h
	deadline := renewed.Add(h.ttl / lostAfter)
	for {
		sent := time.Now()
		rctx, cancel := context.WithDeadline(ctx, deadline)
		ok, err := h.db.AcquireLease(rctx, leaseName(l.key), h.id, h.ttl)
		cancel()
		switch {
		case ctx.Err() != nil:
			return renewed, false // released
		case err == nil && ok:
			return sent, true
		case err == nil:
			l.lose(errors.New("another process holds it"))
			return renewed, false
		case !time.Now().Before(deadline):
			l.lose(err)
			return renewed, false
		}
		h.log.Warn("renew a messaging session's lease: retrying", "session", l.key, "err", err)
		if !sleep(ctx, min(h.ttl/20, time.Until(deadline))) {
			return renewed, false
		}
	}
}

// lose gives the lease up as lost: its client must stop at once.
func (l *Lease) lose(why error) {
	h := l.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if l.gone {
		return
	}
	h.log.Error("a messaging session's lease is lost: its client stops", "session", l.key, "err", why)
	l.gone = true
	delete(h.held, l.key)
	close(l.lost)
}

// Close releases every lease still held (their clients must be closed
// first).
func (h *Holder) Close(ctx context.Context) {
	h.mu.Lock()
	leases := make([]*Lease, 0, len(h.held))
	for _, l := range h.held {
		leases = append(leases, l)
	}
	h.mu.Unlock()
	for _, l := range leases {
		l.Release(ctx)
	}
}

// SlotKey is the session key of slot n (from 1) of a session kept in
// slots: prefix itself for the first, prefix#n for the others.
func SlotKey(prefix string, n int) string {
	if n <= 1 {
		return prefix
	}
	return prefix + "#" + strconv.Itoa(n)
}

// TakeSlot takes the first free of slots sessions of prefix (SlotKey),
// waiting until one is free when every slot is held, until ctx ends. The
// bot's processes each hold a session of their own this way: a token can
// be imported into any number of keys, and each slot's key is imported
// once and kept, so restarts do not import again.
func (h *Holder) TakeSlot(ctx context.Context, prefix string, slots int) (*Lease, error) {
	return retryBusy(ctx, "a free "+prefix+" session", func() (*Lease, error) {
		for n := 1; n < max(slots, 1); n++ {
			if l, err := h.Take(ctx, SlotKey(prefix, n)); !errors.Is(err, ErrBusy) {
				return l, err
			}
		}
		return h.Take(ctx, SlotKey(prefix, max(slots, 1)))
	})
}
