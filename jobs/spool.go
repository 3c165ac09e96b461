package jobs

import (
	"fmt"
	"os"
	"path/filepath"
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
