package pgserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// testDataDir returns a path under a fresh directory in os.TempDir(), removed at the
// end of the test. The directory is made enterable by everyone: when the tests run
// as root, the server runs as "postgres", which must reach the data directory
// (t.TempDir() makes 0700 directories).
func testDataDir(t *testing.T, elems ...string) string {
	t.Helper()
	base, err := os.MkdirTemp("", "pgserver-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(append([]string{base}, elems...)...)
}

func testOptions(t *testing.T, dataDir string) Options {
	return Options{
		DataDir: dataDir,
		Logger:  slog.New(slog.NewTextHandler(t.Output(), nil)),
		// Durability is not under test; these make initdb and the server faster.
		ExtraConfig: map[string]string{"fsync": "off", "full_page_writes": "off", "synchronous_commit": "off"},
	}
}

// template is a stopped cluster made once per test process the way `hoard web` and
// `hoard worker` start together on an empty volume: two concurrent Starts on a fresh
// directory. TestFreshConcurrentStart checks how that went; other tests copy the
// cluster rather than pay for another initdb.
var template struct {
	once     sync.Once
	base     string // removed by TestMain
	dir      string
	reused   [2]bool
	urls     [2]string
	queryErr error // select 1 through the server that was reused
	err      error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if template.base != "" {
		os.RemoveAll(template.base)
	}
	os.Exit(code)
}

func buildTemplate() error {
	base, err := os.MkdirTemp("", "pgserver-template-")
	if err != nil {
		return err
	}
	template.base = base
	if err := os.Chmod(base, 0o755); err != nil {
		return err
	}
	dir := filepath.Join(base, "data", "pg") // the parents are created too
	opts := Options{
		DataDir:     dir,
		Logger:      slog.New(slog.DiscardHandler),
		ExtraConfig: map[string]string{"fsync": "off", "full_page_writes": "off"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var servers [2]*Server
	var errs [2]error
	var wg sync.WaitGroup
	for i := range servers {
		wg.Go(func() { servers[i], errs[i] = Start(ctx, opts) })
	}
	wg.Wait()
	for i, s := range servers {
		if s != nil {
			template.reused[i], template.urls[i] = s.Reused(), s.URL()
			if s.Reused() {
				_, template.queryErr = ping(ctx, s.URL())
			}
		}
	}
	// The reused one first: its Stop does nothing; the owner's stops the server.
	all := errs[:]
	for _, wantReused := range []bool{true, false} {
		for _, s := range servers {
			if s != nil && s.Reused() == wantReused {
				all = append(all, s.Stop(ctx))
			}
		}
	}
	template.dir = dir
	return errors.Join(all...)
}

// serverFacts is what ping learns from a server that answers.
type serverFacts struct {
	Database string // current_database()
	Listen   string // listen_addresses: "" when it takes no TCP connections
}

// ping connects to connString and asks the server which database the
// connection reached and what it listens on: a server that answers is up.
func ping(ctx context.Context, connString string) (serverFacts, error) {
	var f serverFacts
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return f, err
	}
	defer conn.Close(ctx)
	err = conn.QueryRow(ctx, "SELECT current_database(), current_setting('listen_addresses')").Scan(&f.Database, &f.Listen)
	if err != nil {
		return f, fmt.Errorf("ping %s: %w", connString, err)
	}
	return f, nil
}

// mustPing is ping for a test: it fails the test when the server does not
// answer at connString.
func mustPing(t *testing.T, connString string) serverFacts {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, err := ping(ctx, connString)
	if err != nil {
		t.Fatalf("ping %s: %v", connString, err)
	}
	return f
}

// clusterCopy returns a data directory (under testDataDir, at elems) that holds a
// copy of the template cluster.
func clusterCopy(t *testing.T, elems ...string) string {
	t.Helper()
	template.once.Do(func() { template.err = buildTemplate() })
	if template.err != nil {
		t.Fatalf("template cluster: %v", template.err)
	}
	dst := testDataDir(t, elems...)
	// Parents between the test directory and dst must be enterable by postgres
	// whatever the umask.
	var parents []string
	for p := filepath.Dir(dst); ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			break
		}
		parents = append(parents, p)
	}
	for i := len(parents) - 1; i >= 0; i-- {
		if err := os.Mkdir(parents[i], 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(parents[i], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("cp", "-a", template.dir, dst).CombinedOutput(); err != nil {
		t.Fatalf("copy template cluster: %v\n%s", err, out)
	}
	return dst
}

// startServer starts a server and makes sure it is stopped when the test ends.
func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { stopServer(t, s) })
	return s
}

func stopServer(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

// queryInt runs a query that returns one integer.
func queryInt(t *testing.T, connString, sql string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		t.Fatalf("connect %s: %v", connString, err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// assertStopped checks that the postmaster pid has exited and left no postmaster.pid.
func assertStopped(t *testing.T, dataDir string, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("postmaster %d still running after Stop (kill: %v)", pid, err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "postmaster.pid")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("postmaster.pid still present after Stop: %v", err)
	}
}

func TestStartStopRestart(t *testing.T) {
	t.Parallel()
	dir := clusterCopy(t, "pg")
	s := startServer(t, testOptions(t, dir))
	if s.Reused() {
		t.Fatal("Reused() = true for a fresh data directory")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg, err := pgxpool.ParseConfig(s.URL())
	if err != nil {
		t.Fatalf("pgxpool.ParseConfig(%q): %v", s.URL(), err)
	}
	if cfg.ConnConfig.Database != "hoard" || cfg.ConnConfig.User != "postgres" || cfg.ConnConfig.Host != s.socketDir {
		t.Errorf("URL %q parses to db=%q user=%q host=%q", s.URL(), cfg.ConnConfig.Database, cfg.ConnConfig.User, cfg.ConnConfig.Host)
	}
	if s.socketDir != s.dataDir {
		t.Errorf("socket dir = %s, want the data directory %s (short path)", s.socketDir, s.dataDir)
	}
	if f := mustPing(t, s.URL()); f != (serverFacts{Database: "hoard"}) {
		t.Fatalf("URL reaches %+v, want database hoard, no TCP listener", f)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "CREATE TABLE marker (v int); INSERT INTO marker VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	pool.Close()
	if f := mustPing(t, s.AdminURL()); f.Database != "postgres" {
		t.Errorf("AdminURL connects to the %q database, not postgres", f.Database)
	}

	t.Run("classify live holder", func(t *testing.T) {
		lf, err := readLockFile(filepath.Join(dir, "postmaster.pid"))
		if err != nil {
			t.Fatal(err)
		}
		if lf.pid != s.proc.Pid || lf.status != "ready" || lf.socketDir != s.socketDir || lf.port != 5432 {
			t.Errorf("postmaster.pid = %+v", lf)
		}
		if got, why := classifyHolder(lf, dir); got != holderLive {
			t.Errorf("our running server: %v (%s), want live", got, why)
		}
		older := lf
		older.startTime -= 3600 // the pid now belongs to a postgres started after the file
		if got, why := classifyHolder(older, dir); got != holderGone {
			t.Errorf("pid reused by a later postgres: %v (%s), want gone", got, why)
		}
		if got, why := classifyHolder(lf, t.TempDir()); got != holderGone {
			t.Errorf("postgres of another data directory: %v (%s), want gone", got, why)
		}
	})

	pgVersion, err := os.Stat(filepath.Join(dir, "PG_VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	pid := s.proc.Pid
	// A cleanup with a cancelled context must still shut the server down.
	cancelled, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	if err := s.Stop(cancelled); err != nil {
		t.Fatalf("Stop with a cancelled context: %v", err)
	}
	assertStopped(t, dir, pid)
	if err := s.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}

	s2 := startServer(t, testOptions(t, dir))
	if s2.Reused() {
		t.Error("Reused() = true after the previous server was stopped")
	}
	if n := queryInt(t, s2.URL(), "SELECT v FROM marker"); n != 42 {
		t.Errorf("marker = %d, want 42", n)
	}
	again, err := os.Stat(filepath.Join(dir, "PG_VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	if !again.ModTime().Equal(pgVersion.ModTime()) || !os.SameFile(again, pgVersion) {
		t.Error("PG_VERSION was rewritten: initdb ran again on an existing cluster")
	}
	pid = s2.proc.Pid
	stopServer(t, s2)
	assertStopped(t, dir, pid)
}

func TestStalePostmasterPID(t *testing.T) {
	t.Parallel()
	dir := clusterCopy(t, "pg")
	socketDir := dir // short path: the socket lives in the data directory

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = other.Process.Kill()
		_ = other.Wait()
	})

	lockContent := func(pid int) string {
		return fmt.Sprintf("%d\n%s\n%d\n5432\n%s\n\n  5432001     98310\nready   \n", pid, dir, time.Now().Unix(), socketDir)
	}
	tests := []struct {
		name    string
		content string
		old     bool // backdate the file: not one being written right now
	}{
		{name: "dead pid", content: lockContent(dead.Process.Pid)},
		{name: "pid reused by another program", content: lockContent(other.Process.Pid)},
		{name: "garbage", content: "not a pid\n", old: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidPath := filepath.Join(dir, "postmaster.pid")
			// The socket lock file is stale too after a crash, and postgres refuses a
			// live pid in it as well.
			for _, p := range []string{pidPath, filepath.Join(socketDir, ".s.PGSQL.5432.lock")} {
				if err := os.WriteFile(p, []byte(tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
				if tt.old {
					past := time.Now().Add(-time.Minute)
					if err := os.Chtimes(p, past, past); err != nil {
						t.Fatal(err)
					}
				}
			}
			s := startServer(t, testOptions(t, dir))
			if s.Reused() || s.socketDir != socketDir {
				t.Fatalf("Reused() = %v, socket dir %s: a stale postmaster.pid was taken for a running server", s.Reused(), s.socketDir)
			}
			mustPing(t, s.URL())
			stopServer(t, s)
		})
	}
}

func TestFreshConcurrentStart(t *testing.T) {
	t.Parallel()
	clusterCopy(t, "pg") // builds the template: two Starts at once on a fresh directory
	if template.reused[0] == template.reused[1] {
		t.Errorf("Reused() = %v, want exactly one true: one Start runs initdb and the server, the other reuses it", template.reused)
	}
	if template.urls[0] != template.urls[1] {
		t.Errorf("URLs differ: %q and %q", template.urls[0], template.urls[1])
	}
	if template.queryErr != nil {
		t.Errorf("through the reused server: %v", template.queryErr)
	}
	if _, err := os.Stat(filepath.Join(template.dir, "postmaster.pid")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("postmaster.pid left after Stop: %v", err)
	}
	if _, err := os.Stat(filepath.Join(template.dir, "PG_VERSION")); err != nil {
		t.Errorf("no cluster: %v", err)
	}
	fi, err := os.Stat(template.dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("data directory mode = %04o, want 0700", fi.Mode().Perm())
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatal(err)
		}
		if uid := strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid)); uid != u.Uid {
			t.Errorf("data directory owner uid = %s, want postgres (%s)", uid, u.Uid)
		}
		parent, err := os.Stat(filepath.Dir(template.dir))
		if err != nil {
			t.Fatal(err)
		}
		if parent.Mode().Perm() != 0o755 {
			t.Errorf("created parent mode = %04o, want 0755 so that postgres can enter it", parent.Mode().Perm())
		}
	}
}

func TestReuseRunningServer(t *testing.T) {
	t.Parallel()
	dir := clusterCopy(t, "pg")
	owner := startServer(t, testOptions(t, dir))
	if owner.Reused() {
		t.Fatal("Reused() = true with no server running")
	}

	reuser := startServer(t, testOptions(t, dir))
	if !reuser.Reused() {
		t.Fatal("second Start did not reuse the running server")
	}
	if reuser.URL() != owner.URL() || reuser.AdminURL() != owner.AdminURL() {
		t.Errorf("reused URL %q, want %q", reuser.URL(), owner.URL())
	}
	// Another database on the same server; a name that needs quoting and escaping.
	opts := testOptions(t, dir)
	opts.Database = "other db"
	third := startServer(t, opts)
	if !third.Reused() {
		t.Fatal("third Start did not reuse the running server")
	}
	if f := mustPing(t, third.URL()); f.Database != opts.Database {
		t.Errorf("the third server's URL reaches database %q, want %q", f.Database, opts.Database)
	}

	stopServer(t, third)
	stopServer(t, reuser)
	mustPing(t, owner.URL()) // the owner's server outlives its reusers
	pid := owner.proc.Pid
	stopServer(t, owner)
	assertStopped(t, dir, pid)
}

func TestLongDataDirAndTCP(t *testing.T) {
	t.Parallel()
	dir := clusterCopy(t, strings.Repeat("a", 50), strings.Repeat("b", 50), "pg")
	port := freePort(t)
	if n := len(filepath.Join(dir, socketName(port))); n <= maxSocketPath {
		t.Fatalf("socket path in the data dir is %d bytes; the test needs > %d", n, maxSocketPath)
	}
	opts := testOptions(t, dir)
	opts.Port = port
	s := startServer(t, opts)
	if s.socketDir == s.dataDir || !strings.HasPrefix(s.socketDir, os.TempDir()) {
		t.Errorf("socket dir = %s, want a short directory under %s", s.socketDir, os.TempDir())
	}
	mustPing(t, s.URL()) // over the socket
	tcp := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/hoard?sslmode=disable", port)
	mustPing(t, tcp)
	stopServer(t, s)
	if _, err := os.Stat(s.socketDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("temporary socket dir left behind: %v", err)
	}
}

func TestCancelledStartLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	dir := clusterCopy(t, "pg")
	binDir, err := FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions(t, dir)
	opts.BinDir = binDir
	// Give up as soon as the server has written postmaster.pid, that is while it
	// starts; Start must then stop it and leave nothing behind.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); err == nil {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	s, err := Start(ctx, opts)
	if err == nil {
		stopServer(t, s)
		t.Skip("the server was ready before the cancellation; nothing to test")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Start: %v, want context.Canceled", err)
	}
	t.Logf("Start: %v", err)
	if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("postmaster.pid left behind by a cancelled Start: %v", err)
	}
	// The cluster is still fine.
	s = startServer(t, testOptions(t, dir))
	mustPing(t, s.URL())
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestFindBinDir(t *testing.T) {
	t.Parallel()
	fakeBin := func(t *testing.T, dir string, names ...string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}

	t.Run("this machine", func(t *testing.T) {
		dir, err := FindBinDir()
		if err != nil {
			t.Fatal(err)
		}
		if missingBinary(dir) != "" {
			t.Errorf("FindBinDir() = %s, which lacks %s", dir, missingBinary(dir))
		}
	})
	t.Run("highest complete version", func(t *testing.T) {
		root := t.TempDir()
		fakeBin(t, filepath.Join(root, "9.6", "bin"), requiredBinaries...)
		fakeBin(t, filepath.Join(root, "15", "bin"), requiredBinaries...)
		fakeBin(t, filepath.Join(root, "16", "bin"), "initdb", "pg_ctl") // client only
		fakeBin(t, filepath.Join(root, "latest", "bin"), requiredBinaries...)
		got, err := findBinDir("", root)
		if want := filepath.Join(root, "15", "bin"); got != want || err != nil {
			t.Errorf("findBinDir = %q, %v; want %q", got, err, want)
		}
	})
	t.Run("PATH", func(t *testing.T) {
		bin := t.TempDir()
		fakeBin(t, bin, requiredBinaries...)
		got, err := findBinDir(bin, filepath.Join(t.TempDir(), "none"))
		if got != bin || err != nil {
			t.Errorf("findBinDir = %q, %v; want %q", got, err, bin)
		}
	})
	t.Run("nothing installed", func(t *testing.T) {
		_, err := findBinDir(t.TempDir(), filepath.Join(t.TempDir(), "none"))
		if !errors.Is(err, ErrNoPostgres) || !strings.Contains(err.Error(), "install PostgreSQL") {
			t.Errorf("err = %v, want ErrNoPostgres", err)
		}
	})
	t.Run("bogus BinDir", func(t *testing.T) {
		opts := testOptions(t, testDataDir(t, "pg"))
		opts.BinDir = t.TempDir()
		_, err := Start(t.Context(), opts)
		if !errors.Is(err, ErrNoPostgres) {
			t.Errorf("Start with an empty BinDir: %v, want ErrNoPostgres", err)
		}
	})
}

func TestStartRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(*Options)
		want   string
	}{
		{"no data dir", func(o *Options) { o.DataDir = "" }, "DataDir is required"},
		{"reserved setting", func(o *Options) { o.ExtraConfig = map[string]string{"Port": "1"} }, "cannot set Port"},
		{"bad setting name", func(o *Options) { o.ExtraConfig = map[string]string{"a=b": "1"} }, "bad setting name"},
		{"negative port", func(o *Options) { o.Port = -1 }, "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions(t, "/nonexistent/pg")
			tt.modify(&opts)
			_, err := Start(t.Context(), opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestUnreachableDataDir(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root: only then does the server run as another user")
	}
	base, err := os.MkdirTemp("", "pgserver-private-") // 0700, root's
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	_, err = Start(t.Context(), testOptions(t, filepath.Join(base, "pg")))
	if err == nil || !strings.Contains(err.Error(), "cannot enter directory "+base) || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Errorf("err = %v, want it to name %s and the fix", err, base)
	}
}

func TestParseLockFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    lockFile
		wantErr bool
	}{
		{
			name:    "ready postmaster",
			content: "4242\n/data/pg\n1763880000\n5432\n/data/pg\n\n  5432001     98310\nready   \n",
			want:    lockFile{pid: 4242, dataDir: "/data/pg", startTime: 1763880000, port: 5432, socketDir: "/data/pg", status: "ready"},
		},
		{
			name:    "starting, TCP too",
			content: "7\n/d\n1\n6000\n/tmp/s\n127.0.0.1\n",
			want:    lockFile{pid: 7, dataDir: "/d", startTime: 1, port: 6000, socketDir: "/tmp/s", listenAddr: "127.0.0.1"},
		},
		{name: "single-user backend", content: "-99\n/d\n", want: lockFile{pid: 99, dataDir: "/d"}},
		{name: "empty", content: "", wantErr: true},
		{name: "garbage", content: "x\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseLockFile([]byte(tt.content))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseLockFile = %+v, %v; want %+v (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestChooseSocketDir(t *testing.T) {
	t.Parallel()
	short := "/srv/hoard/pg"
	if d, temp, err := chooseSocketDir(short, 5432); d != short || temp || err != nil {
		t.Errorf("short path: %q %v %v", d, temp, err)
	}
	long := "/srv/" + strings.Repeat("x", 100) + "/pg"
	d1, temp, err := chooseSocketDir(long, 5432)
	if !temp || err != nil || len(filepath.Join(d1, socketName(5432))) > maxSocketPath {
		t.Errorf("long path: %q %v %v", d1, temp, err)
	}
	if d2, _, _ := chooseSocketDir(long, 5432); d2 != d1 {
		t.Errorf("socket dir not stable: %q then %q", d1, d2)
	}
	if d3, _, _ := chooseSocketDir(long+"2", 5432); d3 == d1 {
		t.Errorf("two data dirs share socket dir %q", d1)
	}
}
