// Package pgserver runs an embedded PostgreSQL server from the machine's PostgreSQL
// installation: hoard's own database when DATABASE_URL is unset, and the one
// temporary cluster per test process.
//
// The server is a child process in its own session: a Ctrl-C in the terminal reaches
// hoard, which shuts down its work first and then the server with Server.Stop. If
// hoard dies without Stop, the server keeps running and the next Start on the same
// data directory reuses it.
//
// The package works on Linux (it inspects /proc to tell a live server from a stale
// postmaster.pid) and needs a local PostgreSQL installation; see FindBinDir.
package pgserver

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Options configure Start.
type Options struct {
	// DataDir is the cluster directory, e.g. $DATA_DIR/pg. It is created (mode 0700)
	// if missing and initialized on first use; it must be empty or hold a cluster.
	DataDir string
	// Database is created after start if missing. Default "hoard".
	Database string
	// Logger receives what the server is doing; nil means slog.Default().
	Logger *slog.Logger
	// BinDir overrides the PostgreSQL bin directory; empty means FindBinDir.
	BinDir string
	// Port 0 (the default) serves on the unix socket only; >0 also listens on
	// 127.0.0.1:Port. The socket file is named after Port, or 5432 when Port is 0.
	Port int
	// RunAs is the OS user for initdb and postgres when this process is root, as
	// PostgreSQL refuses to run as root. Default "postgres". Ignored when not root:
	// the children then run as the current user.
	RunAs string
	// ExtraConfig holds extra `-c key=value` server settings (tests pass fsync=off).
	// listen_addresses, port and unix_socket_directories are set from the other
	// options and are rejected here. With fsync=off, initdb also skips its final sync.
	ExtraConfig map[string]string
}

// Server is a PostgreSQL server started (or reused) by Start. Its methods are safe
// for concurrent use.
type Server struct {
	dataDir    string
	socketDir  string // unix socket directory, or "" when only TCP is known (reused)
	host       string // host for URLs: socketDir or a TCP address
	port       int
	database   string
	reused     bool
	tempSocket bool // socketDir is ours under os.TempDir(), removed on Stop
	logger     *slog.Logger

	proc    *os.Process   // nil when reused
	exited  chan struct{} // closed when proc has exited and been reaped
	waitErr error         // proc's exit status; read only after exited is closed

	stopMu  sync.Mutex
	stopped bool
	stopErr error
}

const (
	// superuser is the cluster's superuser, created by initdb -U.
	superuser = "postgres"
	// defaultSocketPort names the unix socket when no TCP port is configured. The
	// socket lives in a directory of our own, so it cannot clash with a system
	// server on the same number.
	defaultSocketPort = 5432
	// maxSocketPath is the longest unix socket path: sun_path holds 108 bytes
	// including the terminating NUL.
	maxSocketPath = 107
	// startTimeout bounds the wait for the server to accept connections when ctx
	// has no deadline; crash recovery after an unclean stop can take a while.
	startTimeout = 5 * time.Minute
	// minFastShutdown is how long Stop lets a fast shutdown finish even when its
	// ctx is already done, before it switches to an immediate shutdown.
	minFastShutdown = 5 * time.Second
	// maxFastShutdown bounds a fast shutdown when ctx has no deadline.
	maxFastShutdown = time.Minute
	// immediateShutdown bounds an immediate shutdown before the last resort, SIGKILL.
	immediateShutdown = 10 * time.Second
	// logFileName is the server's stderr log, in DataDir.
	logFileName = "postgres.log"
	// maxLogSize is the size beyond which Start moves the log aside to
	// postgres.log.1 before starting the server.
	maxLogSize = 10 << 20
)

// reservedSettings are set by Start from Options and cannot come from ExtraConfig.
var reservedSettings = []string{"listen_addresses", "port", "unix_socket_directories"}

// Start runs a PostgreSQL server on opts.DataDir and returns once it accepts
// connections and opts.Database exists.
//
// The first Start on a directory runs initdb (trust authentication, superuser
// "postgres", UTF8, C locale); later ones reuse the cluster. If a live postgres
// already serves DataDir (another hoard process, or one left by a crashed one), Start
// reuses it: Reused reports true and Stop does nothing. A postmaster.pid whose process
// is dead, or is now some other program, is removed before starting. Concurrent
// Starts in several processes on one DataDir serialize on a lock on the directory:
// one starts the server, the others reuse it.
//
// When this process is root, initdb and postgres run as opts.RunAs, which gets
// ownership of DataDir; every parent of DataDir must then be enterable by that user
// (Start never loosens a directory it did not create; the error names the directory
// and the fix). The unix socket lives in DataDir if the path fits the 107-byte limit,
// else in /tmp/hoard-pg-<hash of DataDir>.
//
// Start waits for the server until ctx is done, or at most 5 minutes when ctx has no
// deadline; if it gives up, it stops the server it started. Missing binaries give an
// error wrapping ErrNoPostgres.
func Start(ctx context.Context, opts Options) (*Server, error) {
	logger := cmp.Or(opts.Logger, slog.Default())
	database := cmp.Or(opts.Database, "hoard")
	runAs := cmp.Or(opts.RunAs, "postgres")
	if opts.DataDir == "" {
		return nil, errors.New("pgserver: start: DataDir is required")
	}
	if opts.Port < 0 || opts.Port > 65535 {
		return nil, fmt.Errorf("pgserver: start: port %d out of range", opts.Port)
	}
	if strings.ContainsRune(database, 0) {
		return nil, errors.New("pgserver: start: database name contains NUL")
	}
	for k := range opts.ExtraConfig {
		if k == "" || strings.ContainsAny(k, "= \t\n") {
			return nil, fmt.Errorf("pgserver: start: bad setting name %q in ExtraConfig", k)
		}
		if slices.Contains(reservedSettings, strings.ToLower(k)) {
			return nil, fmt.Errorf("pgserver: start: ExtraConfig cannot set %s: it follows from Options.Port and the data directory", k)
		}
	}

	binDir := opts.BinDir
	if binDir == "" {
		var err error
		if binDir, err = FindBinDir(); err != nil {
			return nil, err
		}
	} else if err := checkBinDir(binDir); err != nil {
		return nil, err
	}
	id, err := resolveIdentity(runAs)
	if err != nil {
		return nil, err
	}

	dataDir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, fmt.Errorf("pgserver: start: %w", err)
	}
	if err := ensureDir(dataDir, 0o700, id); err != nil {
		return nil, err
	}
	if dataDir, err = filepath.EvalSymlinks(dataDir); err != nil {
		return nil, fmt.Errorf("pgserver: start: %w", err)
	}

	unlock, err := lockDir(ctx, dataDir)
	if err != nil {
		return nil, err
	}
	defer unlock()

	s, err := startLocked(ctx, logger, opts, id, binDir, dataDir, database)
	if err != nil {
		return nil, err
	}
	unlock()

	if err := ensureDatabase(ctx, s.AdminURL(), database); err != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), maxFastShutdown)
		defer cancel()
		_ = s.Stop(stopCtx)
		return nil, err
	}
	return s, nil
}

// startLocked runs with the data directory lock held: it reuses a live server or
// starts one.
func startLocked(ctx context.Context, logger *slog.Logger, opts Options, id identity, binDir, dataDir, database string) (*Server, error) {
	// A server we find may be stopping; then look again (a few times).
	for attempt := 1; ; attempt++ {
		s, err := reuseOrClear(ctx, logger, dataDir, database)
		if errors.Is(err, errServerGone) && attempt < 3 {
			continue
		}
		if err != nil || s != nil {
			return s, err
		}
		break
	}

	if id.switches() {
		if err := checkTraversable(dataDir, id); err != nil {
			return nil, err
		}
	}
	if err := takeOwnership(logger, dataDir, id); err != nil {
		return nil, err
	}
	version, err := serverVersion(ctx, binDir)
	if err != nil {
		return nil, err
	}
	if err := initCluster(ctx, logger, binDir, dataDir, version, id, opts.ExtraConfig["fsync"] == "off"); err != nil {
		return nil, err
	}

	socketPort := cmp.Or(opts.Port, defaultSocketPort)
	socketDir, temp, err := chooseSocketDir(dataDir, socketPort)
	if err != nil {
		return nil, err
	}
	if temp {
		if err := ensureSocketDir(socketDir, id); err != nil {
			return nil, err
		}
	}
	removeStaleSocketLock(logger, dataDir, filepath.Join(socketDir, socketName(socketPort)+".lock"))

	s := &Server{
		dataDir:    dataDir,
		socketDir:  socketDir,
		host:       socketDir,
		port:       socketPort,
		database:   database,
		tempSocket: temp,
		logger:     logger,
	}
	if err := s.run(ctx, binDir, id, opts); err != nil {
		return nil, err
	}
	return s, nil
}

// errServerGone reports that a server we meant to reuse stopped while we waited.
var errServerGone = errors.New("server stopped while we waited for it")

// reuseOrClear looks at postmaster.pid: it returns a Server for a live server on
// dataDir, or removes a stale postmaster.pid and returns (nil, nil).
func reuseOrClear(ctx context.Context, logger *slog.Logger, dataDir, database string) (*Server, error) {
	pidPath := filepath.Join(dataDir, "postmaster.pid")
	b, err := os.ReadFile(pidPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgserver: read postmaster.pid: %w", err)
	}
	lf, err := parseLockFile(b)
	if err != nil {
		// A half-written file: a postgres started by someone else is writing it
		// right now, or one was killed while writing it.
		if fi, serr := os.Stat(pidPath); serr == nil && time.Since(fi.ModTime()) < 5*time.Second {
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return nil, fmt.Errorf("pgserver: read postmaster.pid: %w", err)
			}
			return nil, fmt.Errorf("pgserver: read postmaster.pid: %w: %w", err, errServerGone)
		}
		logger.Warn("pgserver: removing unreadable postmaster.pid", "data_dir", dataDir, "err", err)
		return nil, removeIfExists(pidPath)
	}

	state, reason := classifyHolder(lf, dataDir)
	switch state {
	case holderLive:
		return reuse(ctx, logger, dataDir, database, lf, reason)
	case holderGone:
		logger.Warn("pgserver: removing stale postmaster.pid", "data_dir", dataDir, "pid", lf.pid, "reason", reason)
		return nil, removeIfExists(pidPath)
	default:
		logger.Warn("pgserver: cannot tell whether postmaster.pid is stale; leaving it to postgres", "data_dir", dataDir, "pid", lf.pid, "reason", reason)
		return nil, nil
	}
}

// reuse returns a Server for the live postgres described by lf, once it is ready.
func reuse(ctx context.Context, logger *slog.Logger, dataDir, database string, lf lockFile, reason string) (*Server, error) {
	s := &Server{dataDir: dataDir, database: database, reused: true, logger: logger, port: lf.port}
	if err := s.waitReady(ctx, lf.pid, nil, -1); err != nil {
		return nil, fmt.Errorf("pgserver: reuse running server on %s: %w", dataDir, err)
	}
	// Re-read: the socket directory and port are only certain once it is ready.
	if cur, err := readLockFile(filepath.Join(dataDir, "postmaster.pid")); err == nil {
		lf = cur
	}
	s.port = lf.port
	switch {
	case lf.socketDir != "":
		s.socketDir, s.host = lf.socketDir, lf.socketDir
	case lf.listenAddr != "":
		addr, _, _ := strings.Cut(lf.listenAddr, ",")
		if addr = strings.TrimSpace(addr); addr == "*" || addr == "0.0.0.0" {
			addr = "127.0.0.1"
		} else if addr == "::" {
			addr = "::1"
		}
		s.host = addr
	default:
		return nil, fmt.Errorf("pgserver: reuse running server on %s: it listens on no socket and no address", dataDir)
	}
	logger.Info("pgserver: reusing running PostgreSQL", "data_dir", dataDir, "pid", lf.pid, "host", s.host, "port", s.port, "why", reason)
	return s, nil
}

// run starts postgres as a child in its own session and waits until it is ready.
func (s *Server) run(ctx context.Context, binDir string, id identity, opts Options) error {
	listen := ""
	if opts.Port > 0 {
		listen = "127.0.0.1"
	}
	args := []string{"-D", s.dataDir}
	for _, k := range slices.Sorted(maps.Keys(opts.ExtraConfig)) {
		args = append(args, "-c", k+"="+opts.ExtraConfig[k])
	}
	args = append(args,
		"-c", "listen_addresses="+listen,
		"-c", "port="+strconv.Itoa(s.port),
		// Quoted: the setting is a comma-separated list.
		"-c", `unix_socket_directories="`+strings.ReplaceAll(s.socketDir, `"`, `""`)+`"`,
	)

	logPath := filepath.Join(s.dataDir, logFileName)
	if fi, err := os.Stat(logPath); err == nil && fi.Size() > maxLogSize {
		// Keep one previous log; the server only logs warnings, errors and its
		// starts and stops, so this is rare.
		_ = os.Rename(logPath, logPath+".1")
	}
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("pgserver: open server log: %w", err)
	}
	defer logFile.Close()
	if id.switches() {
		if err := logFile.Chown(int(id.uid), int(id.gid)); err != nil {
			return fmt.Errorf("pgserver: chown server log: %w", err)
		}
	}
	logOffset, _ := logFile.Seek(0, io.SeekEnd)

	cmd := exec.Command(filepath.Join(binDir, "postgres"), args...)
	cmd.Dir = s.dataDir
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Setsid: the terminal's Ctrl-C must reach hoard, not the server, so that hoard
	// can finish its work against the database before it calls Stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: id.cred}
	s.logger.Info("pgserver: starting PostgreSQL", "data_dir", s.dataDir, "socket_dir", s.socketDir, "port", s.port, "tcp", listen != "", "bin_dir", binDir, "user", id.name)
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgserver: start postgres: %w", err)
	}
	s.proc = cmd.Process
	s.exited = make(chan struct{})
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()

	if err := s.waitReady(ctx, s.proc.Pid, s.exited, logOffset); err != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), maxFastShutdown)
		defer cancel()
		if serr := s.Stop(stopCtx); serr != nil {
			s.logger.Error("pgserver: stop after failed start", "err", serr)
		}
		return fmt.Errorf("pgserver: start postgres on %s: %w", s.dataDir, err)
	}
	s.logger.Info("pgserver: PostgreSQL ready", "pid", s.proc.Pid, "socket_dir", s.socketDir, "port", s.port, "database", s.database, "took", time.Since(begin).Round(time.Millisecond))
	return nil
}

// waitReady polls postmaster.pid until the server with pid reports "ready" (or
// "standby"), as pg_ctl -w does. exited, when not nil, is closed if the process
// dies; logOffset >= 0 is where this start's output begins in the server log.
func (s *Server) waitReady(ctx context.Context, pid int, exited <-chan struct{}, logOffset int64) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, startTimeout)
		defer cancel()
	}
	pidPath := filepath.Join(s.dataDir, "postmaster.pid")
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		lf, err := readLockFile(pidPath)
		if err == nil && lf.pid == pid && (lf.status == "ready" || lf.status == "standby") {
			return nil
		}
		if exited == nil {
			// Not our child: it is gone if its lock file is gone or has changed hands.
			if errors.Is(err, fs.ErrNotExist) || (err == nil && lf.pid != pid) {
				return fmt.Errorf("pid %d: %w", pid, errServerGone)
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("postgres exited during startup (%v); its log says:\n%s", s.waitErr, s.logTail(logOffset))
		case <-ctx.Done():
			return fmt.Errorf("wait for server (pid %d) to accept connections: %w", pid, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// logTail returns the server log written since offset, at most its last 4 KiB.
func (s *Server) logTail(offset int64) string {
	if offset < 0 {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(s.dataDir, logFileName))
	if err != nil || offset > int64(len(b)) {
		return "(no log)"
	}
	b = b[offset:]
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return strings.TrimSpace(string(b))
}

// URL returns a pgx connection string for the Server's database (Options.Database)
// as the superuser, over the unix socket (or TCP for a reused server that has no
// socket), e.g. "postgres://postgres@/hoard?host=%2Fdata%2Fpg&port=5432&sslmode=disable".
func (s *Server) URL() string { return s.urlFor(s.database) }

// AdminURL returns the connection string for the "postgres" maintenance database,
// in the same form as URL.
func (s *Server) AdminURL() string { return s.urlFor("postgres") }

func (s *Server) urlFor(database string) string {
	q := url.Values{}
	q.Set("host", s.host)
	q.Set("port", strconv.Itoa(s.port))
	q.Set("sslmode", "disable")
	u := url.URL{Scheme: "postgres", User: url.User(superuser), Path: "/" + database, RawQuery: q.Encode()}
	return u.String()
}

// Reused reports whether Start found a server already running on DataDir and reused
// it instead of starting one.
func (s *Server) Reused() bool { return s.reused }

// Stop shuts the server down and waits for it to exit. It does nothing for a reused
// server, which belongs to whoever started it; conversely, processes that reused this
// server lose their connections when it stops.
//
// Stop asks for a fast shutdown (what `pg_ctl stop -m fast` does: SIGINT to the
// postmaster; sessions are ended, a checkpoint is written). It waits for it until ctx
// is done, but at least 5 s even when ctx is already done, so that a cleanup with a
// cancelled context still shuts down cleanly. If the server is still up by then, Stop
// switches to an immediate shutdown (crash recovery on the next start) and, as a last
// resort, kills it. Stop is idempotent: later calls return the first call's result.
func (s *Server) Stop(ctx context.Context) error {
	if s == nil || s.reused {
		return nil
	}
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if s.stopped {
		return s.stopErr
	}
	s.stopped = true
	s.stopErr = s.shutdown(ctx)
	if s.stopErr == nil && s.tempSocket {
		_ = os.Remove(s.socketDir) // only if empty; a newer server may use it already
	}
	return s.stopErr
}

func (s *Server) shutdown(ctx context.Context) error {
	pid := s.proc.Pid
	select {
	case <-s.exited:
		s.logger.Warn("pgserver: PostgreSQL had already exited", "pid", pid, "status", s.waitErr)
		return nil
	default:
	}
	begin := time.Now()
	if err := s.proc.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("pgserver: stop (pid %d): %w", pid, err)
	}
	ctxDone := ctx.Done()
	var hardCap <-chan time.Time
	if ctxDone == nil {
		t := time.NewTimer(maxFastShutdown)
		defer t.Stop()
		hardCap = t.C
	}
	minWait := time.NewTimer(minFastShutdown)
	defer minWait.Stop()
	minDone := minWait.C
wait:
	for {
		select {
		case <-s.exited:
			s.logger.Info("pgserver: PostgreSQL stopped", "pid", pid, "took", time.Since(begin).Round(time.Millisecond))
			return nil
		case <-ctxDone:
			ctxDone = nil
		case <-minDone:
			minDone = nil
		case <-hardCap:
			break wait
		}
		if ctxDone == nil && minDone == nil && ctx.Done() != nil {
			break wait
		}
	}

	s.logger.Warn("pgserver: fast shutdown too slow; switching to immediate shutdown", "pid", pid)
	_ = s.proc.Signal(syscall.SIGQUIT)
	t := time.NewTimer(immediateShutdown)
	defer t.Stop()
	select {
	case <-s.exited:
		return nil
	case <-t.C:
	}
	s.logger.Error("pgserver: PostgreSQL ignored the immediate shutdown; killing it", "pid", pid)
	_ = s.proc.Kill()
	select {
	case <-s.exited:
		return fmt.Errorf("pgserver: stop (pid %d): killed after ignoring fast and immediate shutdown", pid)
	case <-time.After(immediateShutdown):
		return fmt.Errorf("pgserver: stop (pid %d): the server does not exit", pid)
	}
}

// ensureDatabase creates database unless it exists. A concurrent creator winning
// the race is fine.
func ensureDatabase(ctx context.Context, adminURL, database string) error {
	if database == "postgres" {
		return nil
	}
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("pgserver: create database %q: connect: %w", database, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", database).Scan(&exists); err != nil {
		return fmt.Errorf("pgserver: create database %q: look up: %w", database, err)
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{database}.Sanitize())
	var pgErr *pgconn.PgError
	// 42P04 duplicate_database; 23505 unique_violation on pg_database's name index
	// when two CREATE DATABASE statements race.
	if errors.As(err, &pgErr) && (pgErr.Code == "42P04" || pgErr.Code == "23505") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pgserver: create database %q: %w", database, err)
	}
	return nil
}

// lockDir takes an exclusive flock on the data directory, so that processes
// starting on the same directory take turns: initdb and the start of the server
// happen once, and the others find a live server to reuse. The lock goes with the
// process, so a crash never leaves it behind. The returned func is idempotent.
func lockDir(ctx context.Context, dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("pgserver: lock %s: %w", dir, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("pgserver: lock %s: %w", dir, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("pgserver: wait for another process starting PostgreSQL on %s: %w", dir, context.Cause(ctx))
		case <-time.After(50 * time.Millisecond):
		}
	}
	var once sync.Once
	return func() { once.Do(func() { f.Close() }) }, nil // closing releases the flock
}

// takeOwnership makes id the owner of dataDir (recursively, when it is not yet) and
// sets mode 0700, which postgres requires.
func takeOwnership(logger *slog.Logger, dataDir string, id identity) error {
	owner, err := ownerOf(dataDir)
	if err != nil {
		return fmt.Errorf("pgserver: %w", err)
	}
	if owner != id.uid {
		if !id.switches() {
			return fmt.Errorf("pgserver: data directory %s belongs to uid %d, not to the current user (uid %d): chown it or choose another DATA_DIR", dataDir, owner, id.uid)
		}
		logger.Info("pgserver: giving the data directory to the PostgreSQL user", "data_dir", dataDir, "user", id.name, "previous_uid", owner)
		if err := chownTree(dataDir, id); err != nil {
			return fmt.Errorf("pgserver: chown %s to %s: %w", dataDir, id.name, err)
		}
	}
	if err := os.Chmod(dataDir, 0o700); err != nil {
		return fmt.Errorf("pgserver: chmod %s: %w", dataDir, err)
	}
	return nil
}

// serverVersion returns the major version of binDir's postgres ("15").
func serverVersion(ctx context.Context, binDir string) (string, error) {
	out, err := exec.CommandContext(ctx, filepath.Join(binDir, "postgres"), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("pgserver: postgres --version: %w", err)
	}
	// "postgres (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)"
	fields := strings.Fields(string(out))
	if len(fields) < 3 {
		return "", fmt.Errorf("pgserver: postgres --version: unexpected output %q", out)
	}
	return majorVersion(fields[2]), nil
}

// initCluster runs initdb unless dataDir holds a cluster already, and checks that
// the cluster's version matches the binaries.
func initCluster(ctx context.Context, logger *slog.Logger, binDir, dataDir, version string, id identity, noSync bool) error {
	pgVersion, err := os.ReadFile(filepath.Join(dataDir, "PG_VERSION"))
	if err == nil {
		if have := strings.TrimSpace(string(pgVersion)); have != version {
			return fmt.Errorf("pgserver: the cluster in %s is PostgreSQL %s, but the binaries in %s are %s: use a matching installation (Options.BinDir) or another DATA_DIR", dataDir, have, binDir, version)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("pgserver: read PG_VERSION: %w", err)
	}
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		return fmt.Errorf("pgserver: read %s: %w", dataDir, err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("pgserver: %s is neither empty nor a PostgreSQL cluster (no PG_VERSION): point DATA_DIR elsewhere or empty the directory", dataDir)
	}

	args := []string{"-D", dataDir, "-U", superuser, "-A", "trust", "-E", "UTF8", "--locale=C"}
	if noSync {
		args = append(args, "--no-sync")
	}
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "initdb"), args...)
	// On cancellation, SIGINT lets initdb remove what it wrote; a killed initdb would
	// leave a half-made cluster behind.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	cmd.Dir = dataDir
	cmd.Env = childEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: id.cred}
	logger.Info("pgserver: creating PostgreSQL cluster", "data_dir", dataDir, "version", version)
	begin := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgserver: initdb %s: %w\n%s", dataDir, err, tail(out, 4096))
	}
	logger.Debug("pgserver: initdb output", "output", string(out))
	logger.Info("pgserver: created PostgreSQL cluster", "data_dir", dataDir, "took", time.Since(begin).Round(time.Millisecond))
	return nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}

// childEnv is our environment without PG* variables: PGDATA, PGPORT and friends
// must not override what Start sets on the command line.
func childEnv() []string {
	env := os.Environ()
	return slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PG") })
}

func socketName(port int) string { return ".s.PGSQL." + strconv.Itoa(port) }

// chooseSocketDir returns the data directory when the socket path fits the unix
// limit, else a short directory of our own under the temp directory (temp = true),
// named after a hash of dataDir so that every process on the same data directory
// agrees on it.
func chooseSocketDir(dataDir string, port int) (dir string, temp bool, err error) {
	name := socketName(port)
	// A comma would split pgx's host list.
	if len(filepath.Join(dataDir, name)) <= maxSocketPath && !strings.Contains(dataDir, ",") {
		return dataDir, false, nil
	}
	sum := sha256.Sum256([]byte(dataDir))
	base := "hoard-pg-" + hex.EncodeToString(sum[:8])
	for _, tmp := range []string{os.TempDir(), "/tmp"} {
		d := filepath.Join(tmp, base)
		if len(filepath.Join(d, name)) <= maxSocketPath && !strings.Contains(d, ",") {
			return d, true, nil
		}
	}
	return "", false, fmt.Errorf("pgserver: no socket directory short enough for %s (unix socket paths are limited to %d bytes): set TMPDIR to a short path", dataDir, maxSocketPath)
}

// ensureSocketDir creates the temp socket directory, or accepts an existing one only
// if it is a real directory of ours: it sits in a world-writable place where another
// user could have planted a directory or a symlink.
func ensureSocketDir(dir string, id identity) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("pgserver: create socket directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("pgserver: socket directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok {
		return fmt.Errorf("pgserver: socket directory %s is not a directory: remove it", dir)
	}
	if st.Uid != id.uid && !(id.switches() && st.Uid == 0) {
		return fmt.Errorf("pgserver: socket directory %s belongs to uid %d, not to %q: remove it", dir, st.Uid, id.name)
	}
	if id.switches() {
		if err := os.Lchown(dir, int(id.uid), int(id.gid)); err != nil {
			return fmt.Errorf("pgserver: chown socket directory: %w", err)
		}
		if err := checkTraversable(dir, id); err != nil {
			return err
		}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("pgserver: chmod socket directory: %w", err)
	}
	return nil
}

// removeStaleSocketLock removes a socket lock file left by a dead server: postgres
// refuses to start when the pid in it has been reused by a live process.
func removeStaleSocketLock(logger *slog.Logger, dataDir, path string) {
	lf, err := readLockFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err == nil {
		if state, _ := classifyHolder(lf, dataDir); state != holderGone {
			return
		}
	}
	logger.Warn("pgserver: removing stale socket lock file", "path", path)
	_ = os.Remove(path)
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("pgserver: remove %s: %w", path, err)
	}
	return nil
}
