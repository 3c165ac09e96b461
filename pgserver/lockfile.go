package pgserver

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockFile is the parsed content of a postmaster.pid or of a unix socket lock file
// (.s.PGSQL.<port>.lock). PostgreSQL writes both with the same leading lines: pid,
// data directory, start time (Unix seconds), port, first socket directory; the data
// directory lock adds the listen address, the shared memory key and the status.
type lockFile struct {
	pid        int
	dataDir    string
	startTime  int64
	port       int
	socketDir  string
	listenAddr string
	status     string // "starting", "stopping", "ready", "standby"; "" when not written yet
}

// readLockFile reads and parses path. A missing file is reported with an error
// that matches fs.ErrNotExist.
func readLockFile(path string) (lockFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return lockFile{}, err
	}
	return parseLockFile(b)
}

func parseLockFile(b []byte) (lockFile, error) {
	lines := strings.Split(string(b), "\n")
	line := func(i int) string {
		if i < len(lines) {
			return strings.TrimSpace(lines[i])
		}
		return ""
	}
	pid, err := strconv.Atoi(line(0))
	if err != nil {
		return lockFile{}, fmt.Errorf("parse lock file: bad pid line %q", line(0))
	}
	if pid < 0 {
		pid = -pid // a single-user backend writes its pid negated
	}
	lf := lockFile{
		pid:        pid,
		dataDir:    line(1),
		socketDir:  line(4),
		listenAddr: line(5),
		status:     line(7),
	}
	lf.startTime, _ = strconv.ParseInt(line(2), 10, 64)
	lf.port, _ = strconv.Atoi(line(3))
	return lf, nil
}

// holderState says whether the process named in a lock file still holds it.
type holderState int

const (
	// holderGone means no postgres for this data directory runs under that pid:
	// the process is dead, a zombie, another program, or a later postgres that
	// reused the pid. The lock file is stale and may be removed.
	holderGone holderState = iota
	// holderLive means a postgres process for this data directory holds the lock.
	holderLive
	// holderUnknown means the process is alive but cannot be inspected (no /proc):
	// the file is left for postgres itself to judge.
	holderUnknown
)

func (h holderState) String() string {
	switch h {
	case holderGone:
		return "gone"
	case holderLive:
		return "live"
	default:
		return "unknown"
	}
}

// startTimeSlack allows for the rounding of the boot time and of PostgreSQL's start
// time to whole seconds: a process may have started up to this much after the time
// the lock file records and still be the one that wrote it.
const startTimeSlack = 2

// classifyHolder decides whether lf's process is a live postgres that serves
// dataDir. A wrong "gone" could let two postmasters share one data directory, so
// every doubt that cannot be settled comes out "live" or "unknown", never "gone".
// The reason describes the verdict for the logs.
func classifyHolder(lf lockFile, dataDir string) (holderState, string) {
	pid := lf.pid
	if pid <= 0 {
		return holderGone, "no pid in the lock file"
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return holderGone, fmt.Sprintf("process %d is not running", pid)
	}
	procDir := "/proc/" + strconv.Itoa(pid)
	st, err := readProcStat(procDir + "/stat")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Stat("/proc/self/stat"); serr == nil {
				return holderGone, fmt.Sprintf("process %d is not running", pid)
			}
		}
		return holderUnknown, fmt.Sprintf("cannot inspect process %d: %v", pid, err)
	}
	if st.state == "Z" || st.state == "X" {
		return holderGone, fmt.Sprintf("process %d has exited", pid)
	}
	if st.comm != "postgres" && st.comm != "postmaster" {
		return holderGone, fmt.Sprintf("pid %d now belongs to %q, not postgres", pid, st.comm)
	}
	if lf.startTime > 0 {
		if started, ok := processStartTime(st); ok && started > lf.startTime+startTimeSlack {
			return holderGone, fmt.Sprintf("pid %d was reused by a postgres started after the lock file was written", pid)
		}
	}
	cwd, err := os.Stat(procDir + "/cwd") // a postmaster's cwd is its data directory
	if err != nil {
		// Another user's process (we are not root): the name and start time match,
		// which is as far as we can see.
		return holderLive, fmt.Sprintf("postgres process %d is running", pid)
	}
	dd, err := os.Stat(dataDir)
	if err != nil {
		return holderUnknown, fmt.Sprintf("stat data directory: %v", err)
	}
	if !os.SameFile(cwd, dd) {
		return holderGone, fmt.Sprintf("postgres process %d serves another data directory", pid)
	}
	return holderLive, fmt.Sprintf("postgres process %d serves this data directory", pid)
}

// procStat holds the fields of /proc/<pid>/stat that classifyHolder needs.
type procStat struct {
	comm      string
	state     string
	startTick int64 // clock ticks after boot
}

func readProcStat(path string) (procStat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, err
	}
	// "pid (comm) state ppid ..."; comm may itself hold spaces and parentheses.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("parse %s", path)
	}
	fields := strings.Fields(string(b[end+1:]))
	if len(fields) < 20 {
		return procStat{}, fmt.Errorf("parse %s: %d fields", path, len(fields))
	}
	st := procStat{comm: string(b[open+1 : end]), state: fields[0]}
	st.startTick, _ = strconv.ParseInt(fields[19], 10, 64) // field 22 of stat
	return st, nil
}

// userHZ is the unit of /proc/<pid>/stat's start time; Linux fixes it at 100 for
// user space on every architecture.
const userHZ = 100

// processStartTime returns the Unix second at which the process started.
func processStartTime(st procStat) (int64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for l := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(l, "btime "); ok {
			btime, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			if err != nil {
				return 0, false
			}
			return btime + st.startTick/userHZ, true
		}
	}
	return 0, false
}
