package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hoard/hoard"
	"github.com/riverqueue/river"
)

// spoolDir is the server-chosen directory of one source set's download.
func (d *Deps) spoolDir(channelID, messageID int64) string {
	return filepath.Join(d.SpoolDir, fmt.Sprintf("c%d-m%d", channelID, messageID))
}

// removeSpool deletes a spool directory; failures are logged only.
func (d *Deps) removeSpool(dir string) {
	if dir == "" {
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		d.Logger.Warn("remove spool", "dir", dir, "err", err)
	}
}

// makeSpool makes the empty spool directory of one source set's download:
// what an earlier attempt left there is removed first, because a download
// always starts from the first byte.
func (d *Deps) makeSpool(channelID, messageID int64) (string, error) {
	dir := d.spoolDir(channelID, messageID)
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

// reserveSpool admits a download of size bytes into the spool when it fits
// the spool's volume with SpoolMinFree left over, counting the downloads
// this process has in flight; release gives its share back once the bytes
// are on disk (or the download failed). A download that does not fit is
// not started: it raises DISK_LOW (one live notification) and returns a
// snooze of SpoolWait, which spends no attempt.
func (d *Deps) reserveSpool(ctx context.Context, a hoard.IngestMessageArgs) (release func(), err error) {
	g := d.spool
	if g == nil {
		g = &spoolGauge{} // Deps built without Register: nothing shared
	}
	free := d.FreeSpace
	if free == nil {
		free = hoard.FreeBytes
	}
	if err := os.MkdirAll(d.SpoolDir, 0o750); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	n, err := free(d.SpoolDir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	floor := max(d.SpoolMinFree, 0)
	if n-g.bytes-a.Size < floor {
		d.spoolFull(ctx, a, n-g.bytes, floor)
		wait := d.SpoolWait
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

// spoolFull tells the administrators that downloads wait for disk space;
// failing to is logged only (the job waits all the same).
func (d *Deps) spoolFull(ctx context.Context, a hoard.IngestMessageArgs, free, floor int64) {
	d.Logger.Warn("download waits for disk space", "file", a.FileName, "size", a.Size, "free", free, "keep_free", floor)
	c, _ := json.Marshal(map[string]any{"file_name": a.FileName, "size": a.Size, "free": free, "keep_free": floor})
	_, err := d.DB.CreateNotification(ctx, &hoard.Notification{Type: hoard.NotifyDiskLow, Severity: hoard.SeverityWarning,
		Title: "Downloads wait for disk space",
		Message: fmt.Sprintf("%s (%d bytes) is not downloaded: the spool's volume (%s) has %d bytes free and keeps %d free. "+
			"Free some space (or lower UPLOAD_MIN_FREE_BYTES); the downloads start again by themselves.", a.FileName, a.Size, d.SpoolDir, free, floor),
		Context: c, DedupKey: string(hoard.NotifyDiskLow) + ":spool"})
	if err != nil {
		d.Logger.Warn("notify disk space", "err", err)
	}
}
