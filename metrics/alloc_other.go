//go:build !unix

package metrics

import "io/fs"

// allocated is the disk a file uses; without block counts, its size.
func allocated(info fs.FileInfo) int64 { return info.Size() }
