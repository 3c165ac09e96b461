package archive

import (
	"errors"
	"fmt"
	"strconv"
)

// SplitAlign is the granularity of split ranges: every range but the last is
// a multiple of it, so that each uploaded piece is made of whole 512 KiB
// upload chunks.
const SplitAlign = 512 << 10

// PartInfo describes one downloaded source part.
type PartInfo struct {
	Name string
	Size int64
}

// Range is one piece to upload: Length bytes at Offset in the logical
// concatenation of the downloaded parts, uploaded under Name.
type Range struct {
	Name   string
	Offset int64
	Length int64
	// Source is the index of the source part the range is identical to, or
	// -1 when the range is a new byte split.
	Source int
}

// PlanSplit plans the upload of a file made of the source parts (one part for
// a single file). name is the file name used for new pieces.
//
//   - Everything fits (each part <= limit): the ranges are the parts
//     themselves, under their own names.
//   - A single file above the limit, or a multi-part source with any part
//     above the limit: the concatenation is split into equal ranges named
//     <name>.001, <name>.002, … (at least three digits). Every range but the
//     last has the same size, a multiple of SplitAlign; none exceeds limit.
//
// Empty parts are kept as they are when nothing needs splitting. The error
// reports a limit below SplitAlign or a negative size.
func PlanSplit(name string, limit int64, parts []PartInfo) ([]Range, error) {
	if len(parts) == 0 {
		return nil, errors.New("plan split: no parts")
	}
	var total int64
	fits := true
	for _, p := range parts {
		if p.Size < 0 {
			return nil, fmt.Errorf("plan split: part %q has negative size", p.Name)
		}
		total += p.Size
		if p.Size > limit {
			fits = false
		}
	}
	if fits {
		out := make([]Range, len(parts))
		var off int64
		for i, p := range parts {
			out[i] = Range{Name: p.Name, Offset: off, Length: p.Size, Source: i}
			off += p.Size
		}
		return out, nil
	}
	if limit < SplitAlign {
		return nil, fmt.Errorf("plan split: limit %d is below %d", limit, SplitAlign)
	}
	maxPiece := limit / SplitAlign * SplitAlign
	n := (total + maxPiece - 1) / maxPiece
	var size int64
	for ; ; n++ {
		per := (total + n - 1) / n
		size = (per + SplitAlign - 1) / SplitAlign * SplitAlign
		if size <= limit && (n-1)*size < total {
			break
		}
	}
	width := max(3, len(strconv.FormatInt(n, 10)))
	out := make([]Range, 0, n)
	for i := int64(0); i < n; i++ {
		off := i * size
		length := min(size, total-off)
		num := strconv.FormatInt(i+1, 10)
		for len(num) < width {
			num = "0" + num
		}
		out = append(out, Range{Name: name + "." + num, Offset: off, Length: length, Source: -1})
	}
	return out, nil
}
