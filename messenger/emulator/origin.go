package emulator

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/gotd/td/tgerr"
)

// One auth key, one place (notes, telegram.md §11): the platform answers
// 406 AUTH_KEY_DUPLICATED when one auth key is used from two places at
// once and the key is dead from then on (gram-js #616, MadelineProto
// #1464, tdlib #701, mcp-telegram #6: two processes sharing a session
// file). The emulator tells places apart by the process behind each
// connection (on Linux, the process that owns the client's socket: a
// client in another network namespace, such as another container, counts
// by its address), watches which keys each connection uses, and kills a
// key used by connections of two processes open at the same time.

// Origin names the process (or host) a client connection comes from.
type Origin func(c net.Conn) string

// originListener wraps a DC's listener so that every connection reports
// the auth keys it uses.
type originListener struct {
	net.Listener
	e *Emulator
}

// Accept implements net.Listener.
func (l *originListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &keyConn{Conn: c, e: l.e, keys: map[[8]byte]bool{}}, nil
}

// keyConn is a client connection whose packets are read for their auth
// key ids as they pass (sniffer), and whose origin is found on first use.
type keyConn struct {
	net.Conn
	e       *Emulator
	sniffer keySniffer

	once   sync.Once
	origin string

	// keys is guarded by Emulator.mu.
	keys   map[[8]byte]bool
	closed bool
}

// Read implements net.Conn.
func (c *keyConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.sniffer.feed(p[:n], c.used)
	if err != nil {
		c.e.connClosed(c)
	}
	return n, err
}

// Close implements net.Conn.
func (c *keyConn) Close() error {
	c.e.connClosed(c)
	return c.Conn.Close()
}

func (c *keyConn) where() string {
	c.once.Do(func() { c.origin = c.e.origin(c.Conn) })
	return c.origin
}

// used is called with every auth key id a packet of the connection names.
func (c *keyConn) used(key [8]byte) {
	if key == [8]byte{} {
		return // not encrypted: a key exchange
	}
	c.e.mu.Lock()
	seen := c.keys[key]
	c.e.mu.Unlock()
	if seen {
		return
	}
	origin := c.where() // outside e.mu: it may read /proc
	if origin == originGone {
		// Packets of a client that has closed its end (a killed
		// process), read late on a busy machine: its key is not in use
		// there any more.
		c.e.connClosed(c)
		return
	}
	c.e.mu.Lock()
	defer c.e.mu.Unlock()
	if c.closed {
		return
	}
	c.keys[key] = true
	conns := c.e.keyConns[key]
	if conns == nil {
		conns = map[*keyConn]bool{}
		c.e.keyConns[key] = conns
	}
	conns[c] = true
	for other := range conns {
		if other == c || other.origin == origin || c.e.killed[key] != nil {
			continue
		}
		if !other.alive() {
			// Its process is gone but the emulator has not read the end of
			// its connection yet: that is not two places at once.
			c.e.forgetConn(other)
			continue
		}
		c.e.killKey(key, fmt.Sprintf("used from %s and %s at once", other.origin, origin))
	}
}

// originGone is the origin of a loopback connection whose client's end is
// released (socketReleased): a loopback peer shares this host's network
// namespace, so its end is in these tables while a process holds it.
const originGone = "gone"

// alive reports whether the process a connection came from still holds its
// end. Only a connection from a process of this host can be checked; any
// other counts as alive. Called under e.mu (it reads /proc).
func (c *keyConn) alive() bool {
	if c.Conn == nil || c.e.opts.Origin != nil || !strings.HasPrefix(c.origin, "process ") {
		return true
	}
	remote, ok1 := c.RemoteAddr().(*net.TCPAddr)
	local, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return true
	}
	return !socketReleased(remote, local)
}

// connClosed forgets a connection's keys. Called without e.mu.
func (e *Emulator) connClosed(c *keyConn) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.forgetConn(c)
}

// forgetConn forgets a connection's keys. Called under e.mu.
func (e *Emulator) forgetConn(c *keyConn) {
	if c.closed {
		return
	}
	c.closed = true
	for key := range c.keys {
		delete(e.keyConns[key], c)
		if len(e.keyConns[key]) == 0 {
			delete(e.keyConns, key)
		}
	}
}

// killedKey is an auth key the emulator killed: each MTProto session
// that uses it is answered AUTH_KEY_DUPLICATED once, then the key is
// unregistered like any other.
type killedKey struct {
	why  string
	told map[int64]bool
}

// killKey kills an auth key: it is signed out (AUTH_KEY_UNREGISTERED from
// now on) after each session using it heard AUTH_KEY_DUPLICATED once.
// Called under e.mu.
func (e *Emulator) killKey(key [8]byte, why string) {
	e.killed[key] = &killedKey{why: why, told: map[int64]bool{}}
	uid := e.auth[key]
	delete(e.auth, key)
	e.keysKilled++
	e.log.Warn("emulator: auth key used from two places at once: killed (AUTH_KEY_DUPLICATED)",
		"key", hex.EncodeToString(key[:]), "user", uid, "why", why)
}

// duplicated returns AUTH_KEY_DUPLICATED for the first request of each
// session on a killed key. Called under e.mu.
func (e *Emulator) duplicated(key [8]byte, session int64) error {
	k := e.killed[key]
	if k == nil || k.told[session] {
		return nil
	}
	k.told[session] = true
	return tgerr.New(406, "AUTH_KEY_DUPLICATED")
}

// KeysKilled returns how many auth keys the emulator killed because they
// were used from two places at once (or a fault said so).
func (e *Emulator) KeysKilled() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.keysKilled
}

// origin is the configured Origin, else the process that owns the
// client's end of c (Linux), else the client's address.
func (e *Emulator) origin(c net.Conn) string {
	if e.opts.Origin != nil {
		return e.opts.Origin(c)
	}
	remote, ok1 := c.RemoteAddr().(*net.TCPAddr)
	local, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return "addr " + c.RemoteAddr().String()
	}
	if pid, ok := socketOwner(remote, local); ok {
		return "process " + strconv.Itoa(pid)
	}
	if remote.IP.IsLoopback() && socketReleased(remote, local) {
		return originGone
	}
	return "host " + remote.IP.String()
}

// socketOwner finds the process whose TCP socket goes from local to
// remote (Linux /proc); false when it is not on this host's network
// namespace or cannot be read.
func socketOwner(local, remote *net.TCPAddr) (int, bool) {
	inode := findSocketInode(local, remote)
	if inode == "" || inode == "0" {
		return 0, false
	}
	target := "socket:[" + inode + "]"
	if pid, ok := ownsFD("/proc/self", target); ok {
		return pid, true
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if pid, ok := ownsFD(d, target); ok {
			return pid, true
		}
	}
	return 0, false
}

// findSocketInode is the inode of the socket local → remote in this host's
// /proc/net/tcp tables, "" when it is in none.
func findSocketInode(local, remote *net.TCPAddr) string {
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if inode := socketInode(table, local, remote); inode != "" {
			return inode
		}
	}
	return ""
}

// socketReleased reports whether no process holds the socket local → remote
// any more: it is in none of the tables, or is there with inode 0, an
// orphan the kernel is closing (a killed client's end). A socket whose
// owner this process cannot see (another user's) is not released.
func socketReleased(local, remote *net.TCPAddr) bool {
	inode := findSocketInode(local, remote)
	return inode == "" || inode == "0"
}

// socketInode finds the inode of the socket local → remote in a
// /proc/net/tcp table.
func socketInode(table string, local, remote *net.TCPAddr) string {
	f, err := os.Open(table)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 {
			continue
		}
		if procAddrIs(fields[1], local) && procAddrIs(fields[2], remote) {
			return fields[9]
		}
	}
	return ""
}

// procAddrIs reports whether a /proc/net/tcp address ("0100007F:1F90":
// the IP in host byte order words, the port big-endian) is a.
func procAddrIs(s string, a *net.TCPAddr) bool {
	ipHex, portHex, ok := strings.Cut(s, ":")
	if !ok {
		return false
	}
	port, err := strconv.ParseUint(portHex, 16, 16)
	if err != nil || int(port) != a.Port {
		return false
	}
	raw, err := hex.DecodeString(ipHex)
	if err != nil {
		return false
	}
	ip := make(net.IP, len(raw))
	for i := 0; i+4 <= len(raw); i += 4 {
		binary.BigEndian.PutUint32(ip[i:], binary.LittleEndian.Uint32(raw[i:]))
	}
	return ip.Equal(a.IP)
}

// ownsFD reports the pid of process directory dir when one of its file
// descriptors is target.
func ownsFD(dir, target string) (int, bool) {
	fds, err := os.ReadDir(filepath.Join(dir, "fd"))
	if err != nil {
		return 0, false
	}
	for _, fd := range fds {
		if link, err := os.Readlink(filepath.Join(dir, "fd", fd.Name())); err == nil && link == target {
			if dir == "/proc/self" {
				return os.Getpid(), true
			}
			pid, err := strconv.Atoi(filepath.Base(dir))
			return pid, err == nil
		}
	}
	return 0, false
}

// keySniffer follows an intermediate (or padded intermediate) MTProto
// stream, the transport gotd uses, and reports the auth key id at the
// start of each packet. Any other transport is not followed.
type keySniffer struct {
	state  int // 0: the 4-byte tag; 1: a packet's length; 2: its key id; 3: its rest
	head   [8]byte
	n      int
	remain int
	off    bool
}

func (s *keySniffer) feed(p []byte, onKey func([8]byte)) {
	for len(p) > 0 && !s.off {
		switch s.state {
		case 0, 1:
			k := copy(s.head[s.n:4], p)
			s.n, p = s.n+k, p[k:]
			if s.n < 4 {
				return
			}
			s.n = 0
			if s.state == 0 {
				tag := binary.LittleEndian.Uint32(s.head[:4])
				s.off = tag != 0xeeeeeeee && tag != 0xdddddddd
				s.state = 1
				continue
			}
			s.remain = int(binary.LittleEndian.Uint32(s.head[:4]) & 0x7fffffff)
			s.state = 2
		case 2:
			k := copy(s.head[s.n:min(8, s.n+s.remain)], p)
			s.n, p, s.remain = s.n+k, p[k:], s.remain-k
			if s.n == 8 {
				onKey(s.head)
			}
			if s.n == 8 || s.remain == 0 {
				s.n, s.state = 0, 3
			}
		case 3:
			k := min(s.remain, len(p))
			p, s.remain = p[k:], s.remain-k
		}
		if s.state == 3 && s.remain == 0 {
			s.state = 1
		}
	}
}
