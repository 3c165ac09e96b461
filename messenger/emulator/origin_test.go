package emulator

import (
	"encoding/binary"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
)

// intermediate frames packets as gotd's intermediate transport does:
// the tag, then each packet's length and bytes.
func intermediate(tag uint32, packets ...[]byte) []byte {
	out := binary.LittleEndian.AppendUint32(nil, tag)
	for _, p := range packets {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(p)))
		out = append(out, p...)
	}
	return out
}

func packet(key byte, size int) []byte {
	p := make([]byte, size)
	for i := range min(8, size) {
		p[i] = key
	}
	return p
}

func TestKeySnifferReadsEveryPacketsKey(t *testing.T) {
	stream := intermediate(0xeeeeeeee, packet(1, 40), packet(0, 60), packet(2, 8), packet(3, 1000), packet(4, 5))
	for _, tt := range []struct {
		name  string
		tag   uint32
		chunk int
		want  []byte
	}{
		{"whole", 0xeeeeeeee, len(stream), []byte{1, 0, 2, 3}},
		{"a byte at a time", 0xeeeeeeee, 1, []byte{1, 0, 2, 3}},
		{"seven bytes at a time", 0xeeeeeeee, 7, []byte{1, 0, 2, 3}},
		{"padded intermediate", 0xdddddddd, 13, []byte{1, 0, 2, 3}},
		{"another transport is not followed", 0xefefefef, 13, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := slices.Clone(stream)
			binary.LittleEndian.PutUint32(data, tt.tag)
			var s keySniffer
			var got []byte
			for p := data; len(p) > 0; {
				n := min(tt.chunk, len(p))
				s.feed(p[:n], func(k [8]byte) { got = append(got, k[0]) })
				p = p[n:]
			}
			// The 5-byte packet is too short to hold a key id.
			if !slices.Equal(got, tt.want) {
				t.Fatalf("keys %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSocketOwnerFindsTheClientsProcess(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp on this system")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	owner := func(t *testing.T) int {
		t.Helper()
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		pid, ok := socketOwner(c.RemoteAddr().(*net.TCPAddr), c.LocalAddr().(*net.TCPAddr))
		if !ok {
			t.Fatal("no owner found")
		}
		return pid
	}

	t.Run("this process", func(t *testing.T) {
		c, err := net.Dial("tcp4", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if pid := owner(t); pid != os.Getpid() {
			t.Fatalf("owner %d, want this process %d", pid, os.Getpid())
		}
	})
	t.Run("another process", func(t *testing.T) {
		bash, err := exec.LookPath("bash")
		if err != nil {
			t.Skip("no bash to open a connection from another process")
		}
		cmd := exec.Command(bash, "-c", "exec 3<>/dev/tcp/127.0.0.1/"+strconv.Itoa(port)+"; sleep 5")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		if pid := owner(t); pid != cmd.Process.Pid {
			t.Fatalf("owner %d, want the child %d", pid, cmd.Process.Pid)
		}
	})
}

func TestOneKeyFromTwoProcessesIsKilled(t *testing.T) {
	e := testEmulator(t, false)
	key := [8]byte{9}
	e.mu.Lock()
	e.auth[key] = e.account.id
	e.mu.Unlock()
	conn := func(origin string) *keyConn {
		c := &keyConn{e: e, keys: map[[8]byte]bool{}}
		c.once.Do(func() { c.origin = origin })
		return c
	}
	a1, a2, b := conn("process 1"), conn("process 1"), conn("process 2")
	a1.used(key)
	a2.used(key) // one process, two connections: fine
	if n := e.KeysKilled(); n != 0 {
		t.Fatalf("%d keys killed for two connections of one process", n)
	}
	e.connClosed(a1)
	e.connClosed(a2)
	b.used(key) // another process after the first closed: fine
	if n := e.KeysKilled(); n != 0 {
		t.Fatalf("%d keys killed for a key handed over", n)
	}
	a3 := conn("process 1")
	a3.used(key) // both open at once
	if n := e.KeysKilled(); n != 1 {
		t.Fatalf("%d keys killed for a key used by two processes at once, want 1", n)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.auth[key]; ok {
		t.Fatal("the killed key is still signed in")
	}
	var got []string
	for _, session := range []int64{1, 1, 2} {
		got = append(got, rpcType(e.duplicated(key, session)))
	}
	if want := []string{"AUTH_KEY_DUPLICATED", "", "AUTH_KEY_DUPLICATED"}; !slices.Equal(got, want) {
		t.Fatalf("answers %q, want %q (once per session, then unregistered)", got, want)
	}
}

// TestKeyOfAKilledProcessIsFree: a process killed while its connection is
// still open in the emulator (its end not read yet, as on a busy machine)
// does not hold its key: the next process to use the key is not taken for
// a second place.
func TestKeyOfAKilledProcessIsFree(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp on this system")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to open a connection from another process")
	}
	e := testEmulator(t, false)
	key := [8]byte{7}
	e.mu.Lock()
	e.auth[key] = e.account.id
	e.mu.Unlock()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cmd := exec.Command(bash, "-c", "exec 3<>/dev/tcp/127.0.0.1/"+strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)+"; sleep 30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	old := &keyConn{Conn: server, e: e, keys: map[[8]byte]bool{}}
	if got, want := old.where(), "process "+strconv.Itoa(cmd.Process.Pid); got != want {
		t.Fatalf("origin %q, want %q", got, want)
	}
	old.used(key)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	next := &keyConn{e: e, keys: map[[8]byte]bool{}}
	next.once.Do(func() { next.origin = "process 1" })
	next.used(key)
	if n := e.KeysKilled(); n != 0 {
		t.Fatalf("%d keys killed: a killed process's connection counted as a second place", n)
	}
}

// FuzzKeySniffer feeds any bytes, in any chunks: the sniffer never panics
// and reads the same keys however the stream is cut.
func FuzzKeySniffer(f *testing.F) {
	f.Add(intermediate(0xeeeeeeee, packet(1, 40), packet(2, 3)), uint8(3))
	f.Add([]byte{0xee, 0xee, 0xee, 0xee, 0xff, 0xff, 0xff, 0xff, 1}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		read := func(n int) []byte {
			var s keySniffer
			var got []byte
			for p := data; len(p) > 0; {
				k := min(n, len(p))
				s.feed(p[:k], func(key [8]byte) { got = append(got, key[:]...) })
				p = p[k:]
			}
			return got
		}
		if whole, cut := read(len(data)+1), read(int(chunk)%16+1); !slices.Equal(whole, cut) {
			t.Fatalf("keys depend on the chunking: %x vs %x", whole, cut)
		}
	})
}
