package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hoard/hoard"
	"github.com/riverqueue/river"
)

// spool holds the downloads in flight (DATA_DIR/spool): one directory per
// source set, admitted only while the volume has room.
type spool struct {
	log     *slog.Logger
	notices *notices
	// dir is Deps.SpoolDir; free probes its volume (hoard.FreeBytes when
	// nil); minFree and wait are Deps.SpoolMinFree and Deps.SpoolWait.
	dir     string
	free    hoard.FreeSpaceFunc
	minFree int64
	wait    time.Duration
	// gauge is shared by every worker of the process.
	gauge *spoolGauge
}

// setDir is the server-chosen directory of one source set's download.
func (s *spool) setDir(channelID, messageID int64) string {
	return filepath.Join(s.dir, fmt.Sprintf("c%d-m%d", channelID, messageID))
}

// remove deletes a spool directory; failures are logged only.
func (s *spool) remove(dir string) {
	if dir == "" {
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		s.log.Warn("remove spool", "dir", dir, "err", err)
	}
}

// make makes the empty spool directory of one source set's download:
// what an earlier attempt left there is removed first, because a download
// always starts from the first byte.
func (s *spool) make(channelID, messageID int64) (string, error) {
	dir := s.setDir(channelID, messageID)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	return dir, nil
}

// spoolGauge counts the bytes of the downloads a process has started and
// not finished: the free space statfs reports does not hold them yet.
type spoolGauge struct {
	mu    sync.Mutex
	bytes int64
}

// reserve admits a download of size bytes into the spool when it fits the
// spool's volume with minFree left over, counting the downloads this
// process has in flight; release gives its share back once the bytes are
// on disk (or the download failed). A download that does not fit is not
// started: it raises DISK_LOW (one live notification) and returns a snooze
// of wait — no failure, a wait that spends no attempt.
func (s *spool) reserve(ctx context.Context, a hoard.IngestMessageArgs) (release func(), err error) {
	g := s.gauge
	free := s.free
	if free == nil {
		free = hoard.FreeBytes
	}
	if err := os.MkdirAll(s.dir, 0o750); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	n, err := free(s.dir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	floor := max(s.minFree, 0)
	if n-g.bytes-a.Size < floor {
		s.notices.diskLow(ctx, s.dir, a.FileName, a.Size, n-g.bytes, floor)
		wait := s.wait
		if wait <= 0 {
			wait = time.Minute
		}
		return nil, river.JobSnooze(wait)
	}
	g.bytes += a.Size
	return func() {
		g.mu.Lock()
		g.bytes -= a.Size
		g.mu.Unlock()
	}, nil
}
