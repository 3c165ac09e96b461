//go:build unix

package metrics

import (
	"io/fs"
	"syscall"
)

// allocated is the disk a file uses: its allocated 512-byte blocks (a
// sparse download written at scattered offsets uses less than its size).
func allocated(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return info.Size()
}
