package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hoard/hoard/store/storetest"
)

// binary is hoard built once for the process-level tests.
var binary string

// e2eParallel is how many of this package's parallel tests run at once
// unless -parallel says otherwise: its end-to-end cases mostly wait (on
// their hoard processes, flood windows and retries) and keep about one
// core busy at go test's default of two. On a server of TEST_DATABASE_URL
// (PostgreSQL's default of 100 connections, shared with the other
// packages' tests) four at once ran out of connections: two there.
func e2eParallel() int {
	if os.Getenv(storetest.EnvURL) != "" {
		return 2
	}
	return 4
}

func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		if err := flag.Set("test.parallel", strconv.Itoa(e2eParallel())); err != nil {
			panic(err)
		}
	}
	dir, err := os.MkdirTemp("", "hoard-bin-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "hoard")
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	if out, err := exec.Command("go", append(args, ".")...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build hoard: %v\n%s", err, out)
		os.Exit(1)
	}
	storetest.Main(m, func() { os.RemoveAll(dir) })
}

type result struct {
	code           int
	stdout, stderr string
}

// syncBuffer is a bytes.Buffer safe to read while a process writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// hoardCmd prepares the binary with a clean environment plus vars.
func hoardCmd(ctx context.Context, vars map[string]string, args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "LOG_FORMAT=text"}
	for k, v := range vars {
		if k == "DATABASE_URL" {
			v = cappedPool(v)
		}
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

// testPoolConns caps each hoard process's database pool in the tests
// (DATABASE_URL's pool_max_conns): a process that runs the bot opens 20
// connections at once and may hold 40, and the end-to-end cases run in
// parallel beside other packages' tests on one server (100 connections
// for a server of TEST_DATABASE_URL's default configuration). Benchmarks
// keep the service's own sizes.
const testPoolConns = 10

// cappedPool adds testPoolConns to a database URL that sets no pool size,
// unless benchmarks are running.
func cappedPool(url string) string {
	if url == "" || strings.Contains(url, "pool_max_conns=") || flag.Lookup("test.bench").Value.String() != "" {
		return url
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "pool_max_conns=" + strconv.Itoa(testPoolConns)
}

func runHoard(t *testing.T, vars map[string]string, args ...string) result {
	t.Helper()
	return runHoardFor(t, 2*time.Minute, vars, args...)
}

// dataDir makes a fresh DATA_DIR the embedded server's user can reach.
func dataDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hoard-data-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"version"}, exitOK, "hoard dev"},
		{[]string{"help"}, exitOK, "Usage: hoard <command>"},
		{nil, exitUsage, "Usage: hoard <command>"},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"migrate", "--force"}, exitUsage, "flag provided but not defined"},
		{[]string{"emulator"}, exitUsage, "--seed is required"},
		{[]string{"bot"}, exitUsage, "BOT_TOKEN is not set"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := runHoard(t, nil, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stdout+r.stderr, tt.out) {
				t.Fatalf("exit %d, output %q; want exit %d containing %q", r.code, r.stdout+r.stderr, tt.code, tt.out)
			}
		})
	}
}

func TestInvalidConfigurationNamesTheVariable(t *testing.T) {
	r := runHoard(t, map[string]string{"WORKER_MAX_SKIP_ATTEMPTS": "many", "DATABASE_URL": "postgres://x@127.0.0.1:1/x"}, "migrate")
	if r.code != exitUsage || !strings.Contains(r.stderr, "WORKER_MAX_SKIP_ATTEMPTS") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestMigrateTwiceAndConcurrently(t *testing.T) {
	url := storetest.EmptyURL(t)
	for i := 0; i < 2; i++ {
		if r := runHoard(t, map[string]string{"DATABASE_URL": url}, "migrate"); r.code != 0 {
			t.Fatalf("migrate run %d: exit %d\n%s", i+1, r.code, r.stderr)
		} else if i == 1 && strings.Contains(r.stderr, "applying migration") {
			t.Fatalf("second migrate applied something:\n%s", r.stderr)
		}
	}
	url = storetest.EmptyURL(t)
	var wg sync.WaitGroup
	results := make([]result, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runHoard(t, map[string]string{"DATABASE_URL": url}, "migrate")
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("concurrent migrate %d: exit %d\n%s", i, r.code, r.stderr)
		}
	}
}

func TestMigrateWithEmbeddedDatabase(t *testing.T) {
	dir := dataDir(t)
	vars := map[string]string{"DATA_DIR": dir}
	r := runHoard(t, vars, "migrate")
	if r.code != 0 || !strings.Contains(r.stderr, "creating PostgreSQL cluster") || !strings.Contains(r.stderr, "embedded PostgreSQL in "+dir) {
		t.Fatalf("first run: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "pg", "PG_VERSION")); err != nil {
		t.Fatalf("no cluster in DATA_DIR/pg: %v", err)
	}
	r = runHoard(t, vars, "migrate")
	if r.code != 0 || strings.Contains(r.stderr, "creating PostgreSQL cluster") || strings.Contains(r.stderr, "applying migration") {
		t.Fatalf("second run did not reuse the cluster and schema: exit %d\n%s", r.code, r.stderr)
	}
}

func TestWebRefusesToStartWithoutAuthSecret(t *testing.T) {
	for _, secret := range []string{"", "too-short"} {
		r := runHoard(t, map[string]string{"AUTH_SECRET": secret, "DATABASE_URL": "postgres://x@127.0.0.1:1/x"}, "web")
		if r.code == 0 || !strings.Contains(r.stderr, "AUTH_SECRET") {
			t.Fatalf("AUTH_SECRET=%q: exit %d, stderr %q", secret, r.code, r.stderr)
		}
	}
}

func TestServeAnswersHealthAndReadyAndStopsOnSignal(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, _, stderr := hoardCmd(ctx, map[string]string{
		"DATABASE_URL": storetest.URL(t), "LISTEN_ADDR": addr, "AUTH_SECRET": strings.Repeat("s", 40),
	}, "serve")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	base := "http://" + addr
	waitFor(t, base+"/healthz", 60*time.Second, stderr)
	for _, path := range []string{"/healthz", "/readyz", "/"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
		}
		if path == "/readyz" && !strings.Contains(string(body), `"status":"ok"`) {
			t.Fatalf("readyz body %s", body)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM\n%s", err, stderr)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not stop after SIGTERM\n%s", stderr)
	}
	if !strings.Contains(stderr.String(), "worker stopped") || !strings.Contains(stderr.String(), "web stopped") {
		t.Fatalf("no clean shutdown in log:\n%s", stderr)
	}
}

// freeAddr returns a loopback address that is free now, for a process to
// listen on later, with a port below the kernel's range of ephemeral ports
// (32768 and up on Linux). A port from that range (what listening on :0
// gives) goes back to the range when the test closes it, and the next
// outgoing connection of a busy machine (every test's pool to PostgreSQL)
// may take it as its own before the process binds it: TestDemoInBrowser's
// demo failed so ("bind: address already in use") in a CI run.
func freeAddr(t *testing.T) string {
	t.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", 10000+rand.IntN(22000)))
		if err != nil {
			continue // taken: another one
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		return addr
	}
	t.Fatal("no free port between 10000 and 32000 in 100 draws")
	return ""
}

func waitFor(t *testing.T, url string, timeout time.Duration, log *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s did not answer within %s\n%s", url, timeout, log)
}
