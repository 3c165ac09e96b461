package hoard

import (
	"fmt"
	"syscall"
)

// FreeSpaceFunc reports the bytes an unprivileged process may still write
// on the volume that holds dir. Tests inject one to simulate a full disk.
type FreeSpaceFunc func(dir string) (int64, error)

// FreeBytes is the FreeSpaceFunc of the real volumes: statfs(2)'s blocks
// available to unprivileged users times the block size.
func FreeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil //nolint:unconvert // the field types differ between systems
}
