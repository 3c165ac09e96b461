package archive

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"
	"time"
)

// TestDecodeBudget checks which acquisitions may overlap: weights that
// together exceed the budget never do, one heavier than the whole budget
// takes all of it (and so decodes alone) instead of waiting forever.
func TestDecodeBudget(t *testing.T) {
	for _, tc := range []struct {
		name        string
		size        int64
		held, next  int64
		nextOverlap bool // next could start while held is held
	}{
		{name: "two that fit", size: 100, held: 40, next: 60, nextOverlap: true},
		{name: "two over the budget", size: 100, held: 60, next: 60},
		{name: "heavier than the budget waits for any other", size: 100, held: 1, next: 500},
		{name: "anything waits behind one heavier than the budget", size: 100, held: 500, next: 1},
		{name: "zero weight still counts", size: 100, held: 100, next: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewDecodeBudget(tc.size)
			release, err := b.Acquire(context.Background(), tc.held)
			if err != nil {
				t.Fatal(err)
			}
			if got := tryAcquire(b, tc.next); got != tc.nextOverlap {
				t.Fatalf("next acquired while held: %v, want %v", got, tc.nextOverlap)
			}
			release()
			release() // a second call gives nothing back (the semaphore would panic)
			if !tryAcquire(b, tc.next) {
				t.Fatal("next not acquired after the release")
			}
		})
	}
}

// tryAcquire reports whether weight could be acquired at once, and gives
// it back.
func tryAcquire(b *DecodeBudget, weight int64) bool {
	n := min(max(weight, 1), b.size)
	if !b.sem.TryAcquire(n) {
		return false
	}
	b.sem.Release(n)
	return true
}

// TestMakeThumbnailWaitsForBudget: a decode does not start while the
// budget is spent, and gives up when its context ends.
func TestMakeThumbnailWaitsForBudget(t *testing.T) {
	b := NewDecodeBudget(1 << 20)
	release, err := b.Acquire(context.Background(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = MakeThumbnail(ctx, pngImage(t, 10, 10), ThumbnailOptions{Budget: b})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline while the budget is spent", err)
	}
	release()
	if _, err := MakeThumbnail(context.Background(), pngImage(t, 10, 10), ThumbnailOptions{Budget: b}); err != nil {
		t.Fatal(err)
	}
	if !tryAcquire(b, 1<<20) {
		t.Fatal("the decode kept part of the budget")
	}
}

func TestDecodeWeight(t *testing.T) {
	enc := func(img image.Image, progressive bool) []byte {
		var buf bytes.Buffer
		var err error
		if _, ok := img.(*image.YCbCr); ok {
			err = jpeg.Encode(&buf, img, nil)
		} else {
			err = png.Encode(&buf, img)
		}
		if err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		if progressive { // the frame marker of a progressive JPEG (nothing else reads it here)
			i := bytes.Index(data, []byte{0xff, 0xc0})
			data[i+1] = 0xc2
		}
		return data
	}
	r := image.Rect(0, 0, 100, 50)
	interlaced := pngHeader(100, 50)
	interlaced[28] = 1
	binary.BigEndian.PutUint32(interlaced[29:], crc32.ChecksumIEEE(interlaced[12:29]))
	for _, tc := range []struct {
		name string
		data []byte
		want int64
	}{
		{"nrgba png", enc(image.NewNRGBA(r), false), 100 * 50 * 4},
		{"gray png", enc(image.NewGray(r), false), 100 * 50},
		{"16-bit png", enc(image.NewNRGBA64(r), false), 100 * 50 * 8},
		{"paletted png", enc(image.NewPaletted(r, color.Palette{color.Black, color.White}), false), 100 * 50},
		{"interlaced png", interlaced, 100 * 50 * 4 * 2},
		{"baseline jpeg", enc(image.NewYCbCr(r, image.YCbCrSubsampleRatio420), false), 100 * 50 * 3},
		{"progressive jpeg", enc(image.NewYCbCr(r, image.YCbCrSubsampleRatio420), true), 100*50*3 + 100*50*3*4},
		{"bomb of issue 26", pngHeader(4890, 4890), 4890 * 4890 * 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, format, err := image.DecodeConfig(bytes.NewReader(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if got := decodeWeight(tc.data, cfg, format); got != tc.want {
				t.Errorf("weight %d, want %d", got, tc.want)
			}
		})
	}
}
