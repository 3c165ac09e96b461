package emulator

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/gotd/td/bin"
	"github.com/gotd/td/exchange"
	"github.com/gotd/td/tg"
	"github.com/gotd/td/tgerr"
	"github.com/gotd/td/tgtest"
	"github.com/gotd/td/transport"
)

// The emulator is a cluster of data centres, as the platform is (notes,
// telegram.md §11): each DC is an MTProto server of its own, on a port of
// its own, with auth keys of its own. A user (account, bot, seeded user)
// lives on one home DC: logins elsewhere are told to migrate there, and
// only file requests and the import of an exported authorization are
// served on the other DCs. Every file lives on one DC (a seed post's "dc",
// else the uploader's home DC): upload.getFile anywhere else answers
// 303 FILE_MIGRATE_X, and a key that was not authorized on a DC (by
// auth.exportAuthorization on the home DC, then auth.importAuthorization
// there) gets 401 AUTH_KEY_UNREGISTERED.

// Data centres of the emulator: DCs 1..NumDCs, clients connect to EntryDC
// first, and it is every seeded user's home DC unless the seed says
// otherwise.
const (
	NumDCs  = 5
	EntryDC = 2
)

// DefaultRoundTrip is the round trip of each DC as a client near the entry
// DC sees it: 20 ms there, 60 ms to the others (what a client in Europe
// measures to the platform's European and American DCs, roughly), so that
// transfers feel what pipelining and connection counts buy.
func DefaultRoundTrip() map[int]time.Duration {
	out := map[int]time.Duration{}
	for id := 1; id <= NumDCs; id++ {
		out[id] = 60 * time.Millisecond
	}
	out[EntryDC] = 20 * time.Millisecond
	return out
}

// dataCentre is one DC: its server, its listener and its round-trip time.
type dataCentre struct {
	id   int
	srv  *tgtest.Server
	ln   net.Listener
	addr string // requested listen address
	rtt  time.Duration
	done chan struct{}
}

// newDataCentres builds the servers of every DC with one RSA key (the
// platform's DCs share their key set too) and h as the handler.
func (e *Emulator) newDataCentres(key exchange.PrivateKey, h tgtest.Handler) {
	for id := 1; id <= NumDCs; id++ {
		dc := &dataCentre{id: id, addr: "127.0.0.1:0", rtt: e.opts.RoundTrip[id]}
		if id == EntryDC {
			dc.addr = e.opts.Addr
		}
		if a := e.opts.DCAddrs[id]; a != "" {
			dc.addr = a
		}
		dc.srv = tgtest.NewServer(key, h, tgtest.ServerOptions{DC: id, ReadTimeout: e.opts.ReadTimeout})
		e.dcs[id] = dc
	}
}

// listen starts serving every DC; on an error the DCs started are closed.
func (e *Emulator) listen(ctx context.Context) error {
	for id := 1; id <= NumDCs; id++ {
		dc := e.dcs[id]
		ln, err := net.Listen("tcp4", dc.addr)
		if err != nil {
			return fmt.Errorf("emulator: listen for DC %d on %s: %w", id, dc.addr, err)
		}
		dc.ln, dc.done = ln, make(chan struct{})
		go func() {
			defer close(dc.done)
			if err := dc.srv.Serve(ctx, transport.ListenCodec(nil, &originListener{Listener: ln, e: e})); err != nil && ctx.Err() == nil {
				e.log.Error("emulator: DC stopped", "dc", dc.id, "error", err)
			}
		}()
	}
	return nil
}

// dcOptions lists every DC's address, as help.getConfig does.
func (e *Emulator) dcOptions() []tg.DCOption {
	var out []tg.DCOption
	for id := 1; id <= NumDCs; id++ {
		host, port := splitAddr(e.dcs[id].ln.Addr().String())
		out = append(out, tg.DCOption{ID: id, IPAddress: host, Port: port, Static: true})
	}
	return out
}

func splitAddr(addr string) (string, int) {
	host, port, _ := strings.Cut(addr, ":")
	n := 0
	_, _ = fmt.Sscan(port, &n)
	return host, n
}

// onForeignDC is what a request of user u gets on a DC that is not u's
// home: nil for the methods the platform serves there (files, and
// importing an authorization), else 303 USER_MIGRATE_X naming the home DC.
func onForeignDC(method string, u *user, dc int) error {
	if u == nil || u.dc == dc {
		return nil
	}
	switch method {
	case "upload.getFile", "upload.getFileHashes", "upload.saveFilePart", "upload.saveBigFilePart",
		"help.getConfig", "auth.importAuthorization":
		return nil
	}
	return tgerr.New(303, fmt.Sprintf("USER_MIGRATE_%d", u.dc))
}

// exportedAuth is an authorization exported for another DC: single use,
// valid for exportTTL.
type exportedAuth struct {
	userID  int64
	dc      int
	expires time.Time
}

// exportTTL is how long an exported authorization may be imported.
const exportTTL = 5 * time.Minute

// ExportFlood is the flood model of auth.exportAuthorization: a user may
// export Budget authorizations per Window; past it the call answers
// FLOOD_WAIT until the window ends. Clients that rebuild their other-DC
// connections on every start run into it on the platform (Telethon #3107:
// waits of 849 s; waits of 1267 s reported elsewhere).
type ExportFlood struct {
	Budget int
	Window time.Duration
}

// DefaultExportFlood allows 10 exports per 10 minutes.
var DefaultExportFlood = ExportFlood{Budget: 10, Window: 10 * time.Minute}

func (f ExportFlood) withDefaults() ExportFlood {
	if f.Budget <= 0 {
		f.Budget = DefaultExportFlood.Budget
	}
	if f.Window <= 0 {
		f.Window = DefaultExportFlood.Window
	}
	return f
}

// window counts calls in fixed windows.
type window struct {
	start time.Time
	n     int
}

// take spends one call of budget per span, or returns how long to wait
// for the next window.
func (w *window) take(now time.Time, budget int, span time.Duration) (time.Duration, bool) {
	if now.Sub(w.start) >= span {
		w.start, w.n = now, 0
	}
	if w.n >= budget {
		return w.start.Add(span).Sub(now), false
	}
	w.n++
	return 0, true
}

// floodWait is the platform's FLOOD_WAIT_X for a wait of d (at least 1 s).
func floodWait(d time.Duration) error {
	s := int((d + time.Second - 1) / time.Second)
	return tgerr.New(420, fmt.Sprintf("FLOOD_WAIT_%d", max(s, 1)))
}

func authExportAuthorization(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.AuthExportAuthorizationRequest)
	if r.DCID < 1 || r.DCID > NumDCs || r.DCID == c.dc {
		return nil, nil, tgerr.New(400, "DC_ID_INVALID")
	}
	w := c.e.exportWindows[c.user.id]
	if w == nil {
		w = &window{}
		c.e.exportWindows[c.user.id] = w
	}
	if wait, ok := w.take(time.Now(), c.e.exportFlood.Budget, c.e.exportFlood.Window); !ok {
		return nil, nil, floodWait(wait)
	}
	token := make([]byte, 32)
	_, _ = rand.Read(token)
	c.e.exports[string(token)] = exportedAuth{userID: c.user.id, dc: r.DCID, expires: time.Now().Add(exportTTL)}
	return &tg.AuthExportedAuthorization{ID: c.user.id, Bytes: token}, nil, nil
}

func authImportAuthorization(c *call, obj bin.Object) (bin.Encoder, []pending, error) {
	r := obj.(*tg.AuthImportAuthorizationRequest)
	ex, ok := c.e.exports[string(r.Bytes)]
	if !ok || ex.userID != r.ID || ex.dc != c.dc || time.Now().After(ex.expires) {
		return nil, nil, tgerr.New(400, "AUTH_BYTES_INVALID")
	}
	delete(c.e.exports, string(r.Bytes))
	u := c.e.users[ex.userID]
	c.e.auth[c.session.AuthKey.ID] = u.id
	c.user = u
	return &tg.AuthAuthorization{User: c.e.userView(u.id, u)}, nil, nil
}

// validDC reports whether dc names a DC of the emulator.
func validDC(dc int) bool { return dc >= 1 && dc <= NumDCs }
