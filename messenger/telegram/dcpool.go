package telegram

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gotd/td/telegram"
	"github.com/gotd/td/tg"
	"github.com/gotd/td/tgerr"

	"github.com/hoard/hoard/messenger"
)

// dcPools are a client's file connections: one pool of Config.Connections
// connections per data centre, made on first use and kept for the
// client's life. A file is served only by the DC that stores it (its
// Document.DCID; any other answers FILE_MIGRATE_X), so downloads go to
// the file's DC; uploads go to the home DC. A pool to another DC is
// authorized once, when it is made (auth.exportAuthorization at home,
// auth.importAuthorization there: both flood-limited on the platform,
// which is why pools are kept and never made per request). Every pool's
// requests go through the account's limiter.
type dcPools struct {
	client *telegram.Client
	cfg    *Config

	mu     sync.Mutex
	home   int // the home DC the pools were made for
	byDC   map[int]*dcPool
	closed bool
}

// dcPool is the connection pool of one DC, as two clients: transfer sleeps
// through short flood waits in place, chunks returns every flood wait (the
// downloader times each attempt and sleeps outside that timer).
type dcPool struct {
	dc       int
	inv      telegram.CloseInvoker
	transfer *tg.Client
	chunks   *tg.Client
}

func newDCPools(client *telegram.Client, cfg *Config) *dcPools {
	return &dcPools{client: client, cfg: cfg, byDC: map[int]*dcPool{}}
}

// get returns the pool of DC dc (0: the home DC), making it on first use.
// The pools are made anew when the home DC changed (a login that migrated).
func (p *dcPools) get(ctx context.Context, dc int) (*dcPool, error) {
	home := p.client.Config().ThisDC
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("telegram: client closed")
	}
	if home != p.home {
		p.closeLocked()
		p.home = home
	}
	if dc == 0 {
		dc = home
	}
	if pool := p.byDC[dc]; pool != nil {
		return pool, nil
	}
	inv, err := p.open(ctx, dc, dc == home)
	if err != nil {
		return nil, err
	}
	pool := &dcPool{dc: dc, inv: inv,
		transfer: tg.NewClient(&limitedInvoker{next: inv, cfg: p.cfg}),
		chunks:   tg.NewClient(&limitedInvoker{next: inv, cfg: p.cfg, noInline: true})}
	p.byDC[dc] = pool
	return pool, nil
}

// open connects a pool to dc; one to another DC than home is authorized
// there first, with two requests of the account's budget.
func (p *dcPools) open(ctx context.Context, dc int, home bool) (telegram.CloseInvoker, error) {
	n := int64(p.cfg.Connections)
	if home {
		inv, err := p.client.Pool(n)
		if err != nil {
			return nil, fmt.Errorf("telegram: connections to the home DC %d: %w", dc, err)
		}
		return inv, nil
	}
	for _, m := range []string{"auth.exportAuthorization", "auth.importAuthorization"} {
		p.cfg.Observer.Request(m)
		if err := p.cfg.Limiter.Wait(ctx); err != nil {
			return nil, err
		}
	}
	inv, err := p.client.DC(ctx, dc, n)
	if err != nil {
		if d, ok := tgerr.AsFloodWait(err); ok {
			p.cfg.Observer.FloodWait("auth.exportAuthorization", d)
			return nil, &messenger.FloodWait{RetryAfter: d, Method: "auth.exportAuthorization"}
		}
		return nil, fmt.Errorf("telegram: connections to DC %d: %w", dc, err)
	}
	p.cfg.Logger.Info("telegram: connected to another data centre for its files", "dc", dc)
	return inv, nil
}

// close closes every pool; get fails from then on.
func (p *dcPools) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeLocked()
	p.closed = true
}

func (p *dcPools) closeLocked() {
	for dc, pool := range p.byDC {
		_ = pool.inv.Close()
		delete(p.byDC, dc)
	}
}

// fileDC is the DC a download asks for a file's bytes, shared by the
// download's goroutines: the file's DCID at first, the DC a FILE_MIGRATE_X
// answer names once one came.
type fileDC struct{ dc atomic.Int32 }

func newFileDC(dc int) *fileDC {
	f := &fileDC{}
	f.dc.Store(int32(dc))
	return f
}

func (f *fileDC) get() int       { return int(f.dc.Load()) }
func (f *fileDC) set(dc int)     { f.dc.Store(int32(dc)) }
func (f *fileDC) String() string { return fmt.Sprint(f.get()) }

// fileMigrate returns the DC a FILE_MIGRATE_X error names.
func fileMigrate(err error) (int, bool) {
	rpc, ok := tgerr.As(err)
	if !ok || !strings.EqualFold(rpc.Type, "FILE_MIGRATE") || rpc.Argument <= 0 {
		return 0, false
	}
	return rpc.Argument, true
}
