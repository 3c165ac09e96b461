package zipstream

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"testing"
	"time"
)

func TestTimes(t *testing.T) {
	plus2 := time.FixedZone("+02", 2*3600)
	tests := []struct {
		name     string
		modified time.Time
		wantGo   time.Time // as Go's archive/zip reads it: the extended timestamp when present
		wantPy   []int     // as Python's zipfile reads it: the MS-DOS time
	}{
		{"utc", testTime, testTime, []int{2024, 5, 17, 13, 45, 30}},
		{"other zone stored in utc", testTime.In(plus2), testTime, []int{2024, 5, 17, 13, 45, 30}},
		{"sub-second dropped", testTime.Add(999 * time.Millisecond), testTime, []int{2024, 5, 17, 13, 45, 30}},
		{"zero: no extended time", time.Time{}, time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC), []int{1980, 1, 1, 0, 0, 0}},
		{"before 1980: dos clamped", time.Date(1975, 3, 4, 5, 6, 8, 0, time.UTC), time.Date(1975, 3, 4, 5, 6, 8, 0, time.UTC), []int{1980, 1, 1, 0, 0, 0}},
		{"before 1970: no extended time", time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC), []int{1980, 1, 1, 0, 0, 0}},
		{"after 2106: no extended time", time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2107, 12, 31, 23, 59, 58, 0, time.UTC), []int{2107, 12, 31, 23, 59, 58}},
	}
	var entries []Entry
	for i, tt := range tests {
		e := memEntry(i, fmt.Sprintf("%d.txt", i), []byte(tt.name), nil)
		e.Modified = tt.modified
		entries = append(entries, e)
	}
	a := mustNew(t, entries)
	full := readAll(t, a)
	z, err := zip.NewReader(bytes.NewReader(full), a.Size())
	if err != nil {
		t.Fatal(err)
	}
	rep := pythonZip(t, writeTemp(t, full), "list", 0)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := z.File[i].Modified; !got.Equal(tt.wantGo) {
				t.Errorf("Go reads %v, want %v", got, tt.wantGo)
			}
			if got := rep.Files[i].Time; fmt.Sprint(got) != fmt.Sprint(tt.wantPy) {
				t.Errorf("Python reads %v, want %v", got, tt.wantPy)
			}
		})
	}
	if want := time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC); !a.ModTime().Equal(want) { // the latest
		t.Errorf("ModTime() = %v, want %v", a.ModTime(), want)
	}
}

func TestNewErrors(t *testing.T) {
	open := func(context.Context, int64) (io.ReadCloser, error) { return nil, nil }
	tests := []struct {
		name    string
		entries []Entry
		wantErr error
	}{
		{"negative size", []Entry{{Name: "a", Size: -1, Open: open}}, ErrInvalidEntry},
		{"no open", []Entry{{Name: "a", Size: 1}}, ErrInvalidEntry},
		{"empty without open", []Entry{{Name: "a"}}, nil},
		{"past int64", []Entry{{Name: "a", Size: math.MaxInt64, Open: open}}, ErrInvalidEntry},
		{"sum past int64", []Entry{{Name: "a", Size: math.MaxInt64 / 2, Open: open}, {Name: "b", Size: math.MaxInt64 / 2, Open: open}}, ErrInvalidEntry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.entries); !errors.Is(err, tt.wantErr) {
				t.Fatalf("New: %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// trackedCloser counts the closes of an entry reader.
type trackedCloser struct {
	io.Reader
	closes *int
}

// Close implements io.Closer.
func (c trackedCloser) Close() error { *c.closes++; return nil }

func TestReaderErrors(t *testing.T) {
	boom := errors.New("boom")
	data := []byte("0123456789")
	entry := func(crc uint32, open func(off int64) (io.ReadCloser, error)) []Entry {
		return []Entry{{Name: "a", Size: 10, CRC32: crc, Modified: testTime,
			Open: func(_ context.Context, off int64) (io.ReadCloser, error) { return open(off) }}}
	}
	good := func(off int64) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data[off:])), nil }
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		entries []Entry
		ctx     context.Context
		seek    int64 // offset in the entry's data to start at, -1 for the archive's start
		wantErr error
	}{
		{"open fails", entry(crc(data), func(int64) (io.ReadCloser, error) { return nil, boom }), nil, -1, boom},
		{"read fails", entry(crc(data), func(int64) (io.ReadCloser, error) {
			return io.NopCloser(io.MultiReader(bytes.NewReader(data[:3]), iotestErr{boom})), nil
		}), nil, -1, boom},
		{"short entry", entry(crc(data), func(int64) (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data[:5])), nil
		}), nil, -1, ErrShortEntry},
		{"crc mismatch", entry(crc(data)+1, good), nil, -1, ErrChecksum},
		{"crc unchecked after a seek into the data", entry(crc(data)+1, good), nil, 4, nil},
		{"canceled", entry(crc(data), good), canceled, -1, context.Canceled},
		{"good", entry(crc(data), good), nil, -1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustNew(t, tt.entries)
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			r := a.Reader(ctx)
			defer r.Close()
			if tt.seek >= 0 {
				r.Seek(a.entries[0].data+tt.seek, io.SeekStart)
			}
			if _, err := io.ReadAll(r); !errors.Is(err, tt.wantErr) {
				t.Fatalf("read: %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// iotestErr is a reader that fails.
type iotestErr struct{ err error }

// Read implements io.Reader.
func (r iotestErr) Read([]byte) (int, error) { return 0, r.err }

// TestClose checks that entry readers are closed at the entry's end and by
// Close, and that a closed stream refuses reads and bad seeks fail.
func TestClose(t *testing.T) {
	opens, closes := 0, 0
	data := bytes.Repeat([]byte("x"), 1000)
	e := Entry{Name: "a", Size: 1000, CRC32: crc(data), Open: func(_ context.Context, off int64) (io.ReadCloser, error) {
		opens++
		return trackedCloser{bytes.NewReader(data[off:]), &closes}, nil
	}}
	a := mustNew(t, []Entry{e, e})
	r := a.Reader(context.Background())
	if _, err := io.ReadAll(r); err != nil || opens != 2 || closes != 2 {
		t.Fatalf("full read: %v, %d opens, %d closes", err, opens, closes)
	}
	r.Seek(a.entries[1].data+10, io.SeekStart)
	if _, err := r.Read(make([]byte, 5)); err != nil || opens != 3 || closes != 2 {
		t.Fatalf("partial read: %v, %d opens, %d closes", err, opens, closes)
	}
	if err := r.Close(); err != nil || closes != 3 {
		t.Fatalf("Close: %v, %d closes", err, closes)
	}
	if err := r.Close(); err != nil || closes != 3 {
		t.Fatalf("second Close: %v, %d closes", err, closes)
	}
	if _, err := r.Read(make([]byte, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("read after Close: %v", err)
	}
	for _, s := range []struct {
		off    int64
		whence int
	}{{-1, io.SeekStart}, {-a.Size() - 1, io.SeekEnd}, {0, 42}} {
		if _, err := a.Reader(context.Background()).Seek(s.off, s.whence); err == nil {
			t.Errorf("Seek(%d, %d) succeeded", s.off, s.whence)
		}
	}
}
