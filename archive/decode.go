package archive

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"runtime/debug"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// DefaultDecodeBudget is the memory that image decodes in flight may hold
// at once in a process (128 MiB) unless SetDecodeBudget says otherwise:
// one image at the 24-megapixel limit, or many small ones.
const DefaultDecodeBudget = 128 << 20

// freeAfterBytes is the decode weight after which the decoded memory is
// returned to the operating system before the next decode may start: the
// garbage collector would otherwise let the next image pile on top of the
// last one and keep the pages.
const freeAfterBytes = 32 << 20

// DecodeBudget bounds the memory that image decodes hold at once. A decode
// acquires its weight (the bytes its decoded image takes, computed from the
// header before any pixel is decoded) and waits, in arrival order, while
// the others in flight hold too much; an image heavier than the whole
// budget waits for every other decode to end and then decodes alone. Safe
// for concurrent use.
type DecodeBudget struct {
	size int64
	sem  *semaphore.Weighted
}

// NewDecodeBudget returns a budget of size bytes (DefaultDecodeBudget when
// size ≤ 0).
func NewDecodeBudget(size int64) *DecodeBudget {
	if size <= 0 {
		size = DefaultDecodeBudget
	}
	return &DecodeBudget{size: size, sem: semaphore.NewWeighted(size)}
}

// Size returns the budget's bytes.
func (b *DecodeBudget) Size() int64 { return b.size }

// Acquire waits until weight bytes of the budget are free (all of it when
// weight is larger) and returns the function that gives them back, to be
// called once. It fails only when ctx ends first.
func (b *DecodeBudget) Acquire(ctx context.Context, weight int64) (release func(), err error) {
	n := min(max(weight, 1), b.size)
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, fmt.Errorf("decode budget: %w", err)
	}
	var once atomic.Bool
	return func() {
		if !once.Swap(true) {
			b.sem.Release(n)
		}
	}, nil
}

var processBudget atomic.Pointer[DecodeBudget]

func init() { processBudget.Store(NewDecodeBudget(DefaultDecodeBudget)) }

// SetDecodeBudget replaces the process-wide budget that MakeThumbnail uses
// when its options name none (DECODE_MEMORY_BYTES, set once at start-up).
// Decodes already waiting keep the budget they started with.
func SetDecodeBudget(size int64) { processBudget.Store(NewDecodeBudget(size)) }

// ProcessDecodeBudget returns the process-wide budget.
func ProcessDecodeBudget() *DecodeBudget { return processBudget.Load() }

// decodeWeight estimates the bytes that decoding an image of cfg (format
// as image.DecodeConfig names it) allocates: its decoded pixels in their
// colour model, plus what the decoder holds beside them (the passes of an
// interlaced PNG, the coefficients of a progressive JPEG).
func decodeWeight(data []byte, cfg image.Config, format string) int64 {
	pixels := int64(cfg.Width) * int64(cfg.Height)
	w := pixels * bytesPerPixel(cfg.ColorModel)
	switch format {
	case "png":
		if len(data) > 28 && data[28] != 0 { // IHDR interlace method: Adam7
			w *= 2
		}
	case "jpeg":
		if comps, progressive := jpegFrame(data); progressive {
			w += pixels * int64(comps) * 4 // one int32 per coefficient
		}
	}
	return w
}

// bytesPerPixel is the size of one pixel of an image decoded in model m;
// YCbCr counts as 4:4:4, the largest subsampling.
func bytesPerPixel(m color.Model) int64 {
	switch m {
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.YCbCrModel:
		return 3
	case color.RGBAModel, color.NRGBAModel, color.CMYKModel, color.NYCbCrAModel:
		return 4
	case color.RGBA64Model, color.NRGBA64Model:
		return 8
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 8
}

// jpegFrame finds a JPEG's frame header: its component count and whether
// it is progressive. Unreadable headers count as progressive with three
// components, the heavier guess.
func jpegFrame(data []byte) (comps int, progressive bool) {
	i := 2
	for i+4 <= len(data) {
		if data[i] != 0xff {
			break
		}
		marker := data[i+1]
		if marker == 0xff {
			i++
			continue
		}
		n := int(data[i+2])<<8 | int(data[i+3])
		if marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc {
			if i+10 > len(data) {
				break
			}
			return int(data[i+9]), marker == 0xc2 || marker == 0xc6 || marker == 0xca || marker == 0xce
		}
		i += 2 + n
	}
	return 3, true
}

// freeDecoded hands the memory of a heavy decode back to the operating
// system once its image is garbage.
func freeDecoded(weight int64) {
	if weight >= freeAfterBytes {
		debug.FreeOSMemory()
	}
}
