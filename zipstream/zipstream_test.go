package zipstream

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
)

// toolEntries returns entries of random contents and sizes (empty, one
// byte, around a copy buffer, a megabyte), some with hostile or duplicate
// names, with their expected safe names.
func toolEntries(rec *recorder) (entries []Entry, names []string, data [][]byte) {
	rng := rand.New(rand.NewPCG(1, 2))
	specs := []struct {
		name, safe string
		size       int
	}{
		{"model.stl", "model.stl", 100_000},
		{"", "file", 0},
		{"../../etc/passwd", "passwd", 1},
		{"Model.STL", "Model (2).STL", 32 << 10},
		{"dir\\sub\\part.zip", "dir_sub_part.zip", (32 << 10) + 1},
		{"ünïcødé – 模型.obj", "ünïcødé – 模型.obj", 777},
		{"model.stl", "model (3).stl", 1 << 20},
		{"tab\tname\x00.txt", "tab_name_.txt", 5},
	}
	for i, s := range specs {
		b := randomBytes(rng, s.size)
		entries = append(entries, memEntry(i, s.name, b, rec))
		names = append(names, s.safe)
		data = append(data, b)
	}
	return entries, names, data
}

// TestArchiveTools writes an archive fully and checks it with unzip -t,
// Python's zipfile and Go's archive/zip, byte for byte.
func TestArchiveTools(t *testing.T) {
	rec := &recorder{}
	entries, wantNames, data := toolEntries(rec)
	a := mustNew(t, entries)
	if got := a.Names(); !slices.Equal(got, wantNames) {
		t.Fatalf("Names() = %q, want %q", got, wantNames)
	}
	full := readAll(t, a)
	if int64(len(full)) != a.Size() {
		t.Fatalf("wrote %d bytes, Size() = %d", len(full), a.Size())
	}
	var wantCalls []openCall
	wantSHA := map[string]string{}
	for i, d := range data {
		if len(d) > 0 {
			wantCalls = append(wantCalls, openCall{i, 0})
		}
		wantSHA[wantNames[i]] = sha(d)
	}
	if got := rec.take(); !slices.Equal(got, wantCalls) {
		t.Errorf("Open calls = %v, want %v", got, wantCalls)
	}
	path := writeTemp(t, full)
	unzipTest(t, path)

	rep := pythonZip(t, path, "test", -1)
	if rep.Bad != nil {
		t.Errorf("python testzip: bad entry %q", *rep.Bad)
	}
	if fmt.Sprint(rep.SHA) != fmt.Sprint(wantSHA) {
		t.Errorf("python SHA-256 = %v, want %v", rep.SHA, wantSHA)
	}

	z, err := zip.NewReader(bytes.NewReader(full), int64(len(full)))
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range z.File {
		if f.Name != wantNames[i] || f.Method != zip.Store || f.Flags != 1<<11 || !f.Modified.Equal(testTime) {
			t.Errorf("entry %d: name %q method %d flags %#x modified %v", i, f.Name, f.Method, f.Flags, f.Modified)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		if err != nil || !bytes.Equal(got, data[i]) {
			t.Errorf("entry %d %q: %d bytes, err %v; want %d bytes", i, f.Name, len(got), err, len(data[i]))
		}
	}
	if len(z.File) != len(data) {
		t.Errorf("Go's archive/zip lists %d entries, want %d", len(z.File), len(data))
	}
	if bytes.Contains(full[a.cdOff:], []byte("PK\x06\x06")) || bytes.Contains(full[a.cdOff:], []byte("PK\x06\x07")) {
		t.Error("a small archive carries a ZIP64 end record or locator")
	}
}

// TestEmptyArchive checks an archive without entries: just the end record.
func TestEmptyArchive(t *testing.T) {
	a := mustNew(t, nil)
	full := readAll(t, a)
	want := append([]byte("PK\x05\x06"), make([]byte, 18)...)
	if !bytes.Equal(full, want) || a.Size() != int64(len(want)) {
		t.Fatalf("empty archive = %x (Size %d), want %x", full, a.Size(), want)
	}
	if _, err := zip.NewReader(bytes.NewReader(full), a.Size()); err != nil {
		t.Fatal(err)
	}
}

// TestRanges seeks to random and boundary offsets (headers, data, entry
// boundaries, central directory, end record) and checks that every read is
// the same slice of the full stream and that Open is called exactly for the
// entries the range covers, at the offsets Go's archive/zip finds.
func TestRanges(t *testing.T) {
	rec := &recorder{}
	entries, _, data := toolEntries(rec)
	a := mustNew(t, entries)
	full := readAll(t, a)
	rec.take()
	z, err := zip.NewReader(bytes.NewReader(full), int64(len(full)))
	if err != nil {
		t.Fatal(err)
	}
	var dataOff []int64
	var offsets []int64 // boundaries of headers, data and records, ±1
	for i, f := range z.File {
		off, err := f.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		dataOff = append(dataOff, off)
		offsets = append(offsets, a.entries[i].local, off, off+int64(len(data[i])), a.entries[i].central)
	}
	offsets = append(offsets, a.cdOff, a.tailOff, a.Size())
	rng := rand.New(rand.NewPCG(3, 4))
	type span struct{ off, n int64 }
	var spans []span
	for _, o := range offsets {
		for _, d := range []int64{-1, 0, 1} {
			spans = append(spans, span{o + d, 1 + rng.Int64N(70_000)}, span{o + d, 1})
		}
	}
	for range 300 {
		spans = append(spans, span{rng.Int64N(a.Size() + 10), 1 + rng.Int64N(200_000)})
	}
	for _, s := range spans {
		if s.off < 0 {
			continue
		}
		r := a.Reader(context.Background()) // one per request, as ServeContent is used
		if _, err := r.Seek(s.off, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, s.n)
		n, err := io.ReadFull(r, buf)
		r.Close()
		end := min(s.off+s.n, a.Size())
		want := full[min(s.off, a.Size()):end]
		if !bytes.Equal(buf[:n], want) || (err != nil && int64(n) == s.n) {
			t.Fatalf("read %d at %d: got %d bytes (err %v), want %d bytes equal to the stream", s.n, s.off, n, err, len(want))
		}
		var wantCalls []openCall
		for i, d := range data {
			lo, hi := max(s.off, dataOff[i]), min(end, dataOff[i]+int64(len(d)))
			if lo < hi {
				wantCalls = append(wantCalls, openCall{i, lo - dataOff[i]})
			}
		}
		if got := rec.take(); !slices.Equal(got, wantCalls) {
			t.Fatalf("read %d at %d: Open calls %v, want %v", s.n, s.off, got, wantCalls)
		}
	}
	// One reader for every span: an open entry reader left at some offset
	// must never leak its bytes into a read elsewhere.
	r := a.Reader(context.Background())
	defer r.Close()
	for _, s := range spans {
		if _, err := r.Seek(max(s.off, 0), io.SeekStart); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, s.n)
		n, _ := io.ReadFull(r, buf)
		if want := full[min(max(s.off, 0), a.Size()):min(max(s.off, 0)+s.n, a.Size())]; !bytes.Equal(buf[:n], want) {
			t.Fatalf("shared reader: read %d at %d differs from the stream", s.n, s.off)
		}
	}
}

// TestSeekKeepsReader checks that reading on after a Seek to the current
// position, or in small pieces, reuses the open entry reader.
func TestSeekKeepsReader(t *testing.T) {
	rec := &recorder{}
	data := randomBytes(rand.New(rand.NewPCG(5, 6)), 10_000)
	a := mustNew(t, []Entry{memEntry(0, "a.bin", data, rec)})
	full := readAll(t, a)
	rec.take()
	r := a.Reader(context.Background())
	defer r.Close()
	var got []byte
	buf := make([]byte, 333)
	for {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Seek(0, io.SeekCurrent); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, full) {
		t.Fatal("small reads differ from the stream")
	}
	if calls, want := rec.take(), []openCall{{0, 0}}; !slices.Equal(calls, want) {
		t.Fatalf("Open calls %v, want %v", calls, want)
	}
}

// TestServeContent serves the archive with http.ServeContent and checks the
// Content-Length of a full response and the bytes of Range requests.
func TestServeContent(t *testing.T) {
	entries, _, _ := toolEntries(nil)
	a := mustNew(t, entries)
	full := readAll(t, a)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/zip")
		w.Header().Set("ETag", a.ETag())
		r := a.Reader(req.Context())
		defer r.Close()
		http.ServeContent(w, req, "group.zip", a.ModTime(), r)
	}))
	defer srv.Close()
	tests := []struct {
		name, rng, ifRange string
		wantStatus         int
		want               []byte
	}{
		{"full", "", "", http.StatusOK, full},
		{"resume", fmt.Sprintf("bytes=%d-", len(full)/3), a.ETag(), http.StatusPartialContent, full[len(full)/3:]},
		{"middle", "bytes=100-200000", "", http.StatusPartialContent, full[100:200001]},
		{"suffix", "bytes=-500", "", http.StatusPartialContent, full[len(full)-500:]},
		{"stale etag", "bytes=10-", `"other"`, http.StatusOK, full},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			if tt.rng != "" {
				req.Header.Set("Range", tt.rng)
			}
			if tt.ifRange != "" {
				req.Header.Set("If-Range", tt.ifRange)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus || resp.ContentLength != int64(len(tt.want)) || !bytes.Equal(body, tt.want) {
				t.Fatalf("status %d, Content-Length %d, %d bytes; want %d, %d bytes equal to the stream",
					resp.StatusCode, resp.ContentLength, len(body), tt.wantStatus, len(tt.want))
			}
		})
	}
}

// TestDeterministic checks that the same entries give the same bytes and
// ETag, and that any change of what the bytes depend on changes the ETag.
func TestDeterministic(t *testing.T) {
	entries, _, _ := toolEntries(nil)
	a, b := mustNew(t, entries), mustNew(t, entries)
	if !bytes.Equal(readAll(t, a), readAll(t, b)) || a.ETag() != b.ETag() {
		t.Fatal("two archives of the same entries differ")
	}
	changes := map[string]func(e *Entry){
		"name":     func(e *Entry) { e.Name = "other.stl" },
		"crc":      func(e *Entry) { e.CRC32++ },
		"modified": func(e *Entry) { e.Modified = e.Modified.Add(time.Second) },
	}
	for name, change := range changes {
		changed := slices.Clone(entries)
		change(&changed[0])
		if mustNew(t, changed).ETag() == a.ETag() {
			t.Errorf("changing the %s keeps the ETag", name)
		}
	}
}
