package archive

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // decoders registered for image.Decode
	"image/jpeg"
	_ "image/png"
	"strconv"
)

// Defaults of ThumbnailOptions.
const (
	DefaultThumbnailDimension = 800
	DefaultMaxImagePixels     = 24_000_000
	DefaultMaxImageSide       = 16384
	DefaultMaxPassthrough     = 2 << 20
)

// ThumbnailOptions bound MakeThumbnail. Zero values select the defaults.
type ThumbnailOptions struct {
	// MaxDimension is the longest side of the thumbnail
	// (DefaultThumbnailDimension).
	MaxDimension int
	// MaxPixels refuses images with more pixels before decoding them
	// (DefaultMaxImagePixels, about 100 MB of RGBA).
	MaxPixels int
	// MaxSide refuses images with a longer side (DefaultMaxImageSide).
	MaxSide int
	// MaxPassthrough is the largest WebP image kept as it is
	// (DefaultMaxPassthrough): the standard library cannot decode WebP.
	MaxPassthrough int
	// Quality is the JPEG quality (85).
	Quality int
	// Budget bounds the memory of concurrent decodes (the process's,
	// ProcessDecodeBudget, when nil).
	Budget *DecodeBudget
}

func (o ThumbnailOptions) withDefaults() ThumbnailOptions {
	if o.MaxDimension <= 0 {
		o.MaxDimension = DefaultThumbnailDimension
	}
	if o.MaxPixels <= 0 {
		o.MaxPixels = DefaultMaxImagePixels
	}
	if o.MaxSide <= 0 {
		o.MaxSide = DefaultMaxImageSide
	}
	if o.MaxPassthrough <= 0 {
		o.MaxPassthrough = DefaultMaxPassthrough
	}
	if o.Quality <= 0 || o.Quality > 100 {
		o.Quality = 85
	}
	if o.Budget == nil {
		o.Budget = ProcessDecodeBudget()
	}
	return o
}

// Errors of MakeThumbnail.
var (
	ErrNotImage       = errors.New("not a JPEG, PNG, GIF or WebP image")
	ErrImageTooLarge  = errors.New("image dimensions over the limit")
	ErrWebPTooLarge   = errors.New("WebP image too large to keep as it is")
	errImageEmptySize = errors.New("image has no pixels")
)

// ImageTooLargeError is MakeThumbnail's refusal of an image by the
// dimensions its header declares, before any pixel is decoded; it matches
// ErrImageTooLarge.
type ImageTooLargeError struct {
	Format        string // as image.DecodeConfig names it: "png", "jpeg", "gif"
	Width, Height int
	MaxPixels     int // the limits it was held to
	MaxSide       int
}

func (e *ImageTooLargeError) Error() string {
	return fmt.Sprintf("%s of %d×%d: %v (at most %d pixels, %d a side)", e.Format, e.Width, e.Height, ErrImageTooLarge, e.MaxPixels, e.MaxSide)
}

// Message says, for the people who sent the image, what it is and what
// the limit is, e.g. "The image is 16,000 × 16,000 pixels; previews may
// have at most 24 megapixels and 16,384 pixels a side."
func (e *ImageTooLargeError) Message() string {
	return fmt.Sprintf("The image is %s × %s pixels; previews may have at most %s megapixels and %s pixels a side.",
		groupDigits(e.Width), groupDigits(e.Height), strconv.FormatFloat(float64(e.MaxPixels)/1e6, 'f', -1, 64), groupDigits(e.MaxSide))
}

// groupDigits writes n with commas between groups of three digits.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Is makes errors.Is(err, ErrImageTooLarge) hold.
func (e *ImageTooLargeError) Is(target error) bool { return target == ErrImageTooLarge }

// MakeThumbnail turns untrusted image bytes (JPEG, PNG or the first frame of
// a GIF) into a JPEG whose longest side is at most opts.MaxDimension,
// transparent areas on white. The dimensions are read first
// (image.DecodeConfig) and images over MaxSide or MaxPixels are refused
// (*ImageTooLargeError) before any pixel is decoded; then the decode waits
// for its weight in the decode budget (opts.Budget, else the process's), so
// that concurrent decodes never hold more memory than the budget, and ends
// (ctx's error) when ctx does first. The decoded image lives only until it
// is scaled down, and a heavy one is handed back to the operating system
// before the budget is released. WebP images, which the standard library
// cannot decode, are returned unchanged when their header declares at most
// MaxDimension pixels a side and they are at most MaxPassthrough bytes
// (served with a sniffed image type, like an uploaded custom preview);
// larger ones give ErrWebPTooLarge. Decoder panics become errors.
func MakeThumbnail(ctx context.Context, data []byte, opts ThumbnailOptions) ([]byte, error) {
	opts = opts.withDefaults()
	if isWebP(data) {
		return keepWebP(data, opts)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("thumbnail: %w (%v)", ErrNotImage, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, fmt.Errorf("thumbnail: %w", errImageEmptySize)
	}
	if cfg.Width > opts.MaxSide || cfg.Height > opts.MaxSide || int64(cfg.Width)*int64(cfg.Height) > int64(opts.MaxPixels) {
		return nil, fmt.Errorf("thumbnail: %w", &ImageTooLargeError{Format: format, Width: cfg.Width, Height: cfg.Height, MaxPixels: opts.MaxPixels, MaxSide: opts.MaxSide})
	}
	weight := decodeWeight(data, cfg, format)
	release, err := opts.Budget.Acquire(ctx, weight)
	if err != nil {
		return nil, fmt.Errorf("thumbnail: %w", err)
	}
	defer release()
	defer freeDecoded(weight) // before release: the next decode starts on a clean heap
	return thumbnailOf(data, cfg, format, opts)
}

// thumbnailOf decodes data (whose header said cfg) and encodes its
// thumbnail; the decoded image is garbage when it returns.
func thumbnailOf(data []byte, cfg image.Config, format string, opts ThumbnailOptions) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("thumbnail: decoder failure: %v", p)
		}
	}()
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("thumbnail: decode %s: %w", format, err)
	}
	b := src.Bounds()
	if b.Dx() != cfg.Width || b.Dy() != cfg.Height {
		return nil, fmt.Errorf("thumbnail: %s decoded as %d×%d, header says %d×%d", format, b.Dx(), b.Dy(), cfg.Width, cfg.Height)
	}
	tw, th := fitWithin(b.Dx(), b.Dy(), opts.MaxDimension)
	small := shrinkOnWhite(src, tw, th) // src is dead from here on: the encode runs beside garbage
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, small, &jpeg.Options{Quality: opts.Quality}); err != nil {
		return nil, fmt.Errorf("thumbnail: encode: %w", err)
	}
	return buf.Bytes(), nil
}

// keepWebP returns a WebP image as it is when it is small enough to be a
// preview without re-encoding.
func keepWebP(data []byte, opts ThumbnailOptions) ([]byte, error) {
	w, h, ok := webpSize(data)
	if !ok {
		return nil, fmt.Errorf("thumbnail: %w (unreadable WebP header)", ErrNotImage)
	}
	if len(data) > opts.MaxPassthrough || w > opts.MaxDimension || h > opts.MaxDimension {
		return nil, fmt.Errorf("thumbnail: %d×%d, %d bytes (at most %d a side, %d bytes): %w", w, h, len(data), opts.MaxDimension, opts.MaxPassthrough, ErrWebPTooLarge)
	}
	return data, nil
}

// fitWithin scales w×h down (never up) so that the longer side is at most
// limit, keeping the aspect ratio and at least one pixel per side.
func fitWithin(w, h, limit int) (int, int) {
	if w <= limit && h <= limit {
		return w, h
	}
	if w >= h {
		return limit, max(1, int(int64(h)*int64(limit)/int64(w)))
	}
	return max(1, int(int64(w)*int64(limit)/int64(h))), limit
}

// isWebP reports a RIFF container of WebP data.
func isWebP(data []byte) bool {
	return len(data) >= 16 && string(data[:4]) == "RIFF" && string(data[8:14]) == "WEBPVP"
}

// webpSize reads the canvas size a WebP header declares (simple lossy
// "VP8 ", lossless "VP8L" or extended "VP8X").
func webpSize(data []byte) (w, h int, ok bool) {
	if len(data) < 30 {
		return 0, 0, false
	}
	switch string(data[12:16]) {
	case "VP8 ":
		if data[23] != 0x9d || data[24] != 0x01 || data[25] != 0x2a {
			return 0, 0, false
		}
		w = int(binary.LittleEndian.Uint16(data[26:]) & 0x3fff)
		h = int(binary.LittleEndian.Uint16(data[28:]) & 0x3fff)
	case "VP8L":
		if data[20] != 0x2f {
			return 0, 0, false
		}
		bits := binary.LittleEndian.Uint32(data[21:])
		w, h = int(bits&0x3fff)+1, int(bits>>14&0x3fff)+1
	case "VP8X":
		w = int(data[24]) | int(data[25])<<8 | int(data[26])<<16 + 1
		h = int(data[27]) | int(data[28])<<8 | int(data[29])<<16 + 1
	default:
		return 0, 0, false
	}
	return w, h, w > 0 && h > 0
}
