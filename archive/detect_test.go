package archive

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/hoard/hoard/archive/rarwriter"
)

func TestDetect(t *testing.T) {
	zipData := makeZip(t, []testFile{{"a.txt", []byte("hello")}}, zipOpts{})
	rar5 := makeRar([]rarwriter.File{{Name: "a.txt", Data: []byte("hi")}}, rarwriter.Options{})[0]
	rar4 := makeRar([]rarwriter.File{{Name: "a.txt", Data: []byte("hi")}}, rarwriter.Options{Version4: true})[0]
	sevenZ := append([]byte{'7', 'z', 0xbc, 0xaf, 0x27, 0x1c, 0, 4}, make([]byte, 24)...)
	stub := bytes.Repeat([]byte("MZ stub code "), 5000) // 65 KB "SFX module"
	sfxZip := makeZip(t, []testFile{{"a.txt", []byte("hello")}}, zipOpts{prefix: stub})
	sfxRar := makeRar([]rarwriter.File{{Name: "a.txt", Data: []byte("hi")}}, rarwriter.Options{Prefix: stub})[0]
	sfx7z := append(append([]byte{}, stub...), sevenZ...)
	text := []byte("x^this is just text, not zlib")
	tests := []struct {
		name   string
		file   string
		data   []byte
		want   Type
		offset int64
		byName bool
	}{
		{"zip", "a.zip", zipData, ZIP, 0, false},
		{"zip named rar", "a.rar", zipData, ZIP, 0, false},
		{"rar5", "a.rar", rar5, RAR, 0, false},
		{"rar4", "a.part1.rar", rar4, RAR, 0, false},
		{"7z", "a.7z", sevenZ, SevenZ, 0, false},
		{"sfx zip", "a.zip", sfxZip, ZIP, int64(len(stub)), false},
		{"sfx rar", "a.rar", sfxRar, RAR, int64(len(stub)), false},
		{"sfx 7z", "a.7z", sfx7z, SevenZ, int64(len(stub)), false},
		{"text named rar falls back to name", "a.rar", text, RAR, -1, true},
		{"text numbered part unknown", "a.001", text, Unknown, -1, false},
		{"3mf is a document", "a.3mf", zipData, Document, -1, true},
		{"pdf by extension", "a.pdf", []byte("%PDF-1.7"), Document, -1, true},
		{"empty file", "a.zip", nil, ZIP, -1, true},
		{"7z split part", "a.7z.001", sevenZ, SevenZ, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Detect(bytes.NewReader(tt.data), int64(len(tt.data)), tt.file, 0)
			if err != nil {
				t.Fatal(err)
			}
			if d.Type != tt.want || d.Offset != tt.offset || d.ByName != tt.byName {
				t.Errorf("Detect = %+v, want type %q offset %d byName %v", d, tt.want, tt.offset, tt.byName)
			}
		})
	}
	t.Run("zip with local headers beyond the window", func(t *testing.T) {
		big := makeZip(t, []testFile{{"a.txt", []byte("x")}}, zipOpts{prefix: make([]byte, 2000)})
		d, err := Detect(bytes.NewReader(big), int64(len(big)), "a.bin", 1000)
		if err != nil || d.Type != ZIP || d.Offset != -1 {
			t.Errorf("Detect = %+v, %v", d, err)
		}
	})
	t.Run("file", func(t *testing.T) {
		p := writeTemp(t, "spool-123", zipData)
		d, err := DetectFile(p, "pack.zip")
		if err != nil || d.Type != ZIP {
			t.Errorf("DetectFile = %+v, %v", d, err)
		}
	})
}

// sniff feeds data to a Sniffer in chunks of the given sizes (cycled) and
// returns its decision.
func sniff(data []byte, name string, window int64, chunks ...int) (Detection, int64) {
	s := NewSniffer(window)
	for i := 0; len(data) > 0; i++ {
		n := min(max(chunks[i%len(chunks)], 1), len(data))
		s.Write(data[:n])
		data = data[n:]
	}
	return s.Detect(name), s.Seen()
}

func TestSnifferDecidesAsDetect(t *testing.T) {
	zipData := makeZip(t, []testFile{{"a.txt", []byte("hello")}}, zipOpts{})
	stub := bytes.Repeat([]byte("MZ stub code "), 5000)
	noise := make([]byte, 300_000)
	for i := range noise {
		noise[i] = byte(i*7 + i/251)
	}
	tests := []struct {
		name   string
		file   string
		data   []byte
		window int64
	}{
		{"zip", "a.zip", zipData, 0},
		{"sfx zip", "a.zip", makeZip(t, []testFile{{"a.txt", []byte("hello")}}, zipOpts{prefix: stub}), 0},
		{"sfx rar", "a.rar", makeRar([]rarwriter.File{{Name: "a.txt", Data: []byte("hi")}}, rarwriter.Options{Prefix: stub})[0], 0},
		{"zip beyond the window, EOCD in a ring that wrapped", "a.bin",
			makeZip(t, []testFile{{"a.txt", noise}}, zipOpts{prefix: noise}), 1000},
		{"noise named zip", "a.zip", noise, 0},
		{"noise with a short window", "a.rar", noise, 4096},
		{"three bytes", "a.zip", []byte("PK\x03"), 0},
		{"empty", "a.7z", nil, 0},
		{"document", "a.3mf", zipData, 0},
	}
	for _, tt := range tests {
		want, err := Detect(bytes.NewReader(tt.data), int64(len(tt.data)), tt.file, tt.window)
		if err != nil {
			t.Fatal(err)
		}
		for _, chunks := range [][]int{{1 << 20}, {1}, {7, 65536, 3}, {70000}, {512 << 10, 13}} {
			if len(tt.data) > 100_000 && chunks[0] == 1 {
				continue
			}
			got, seen := sniff(tt.data, tt.file, tt.window, chunks...)
			if got != want || seen != int64(len(tt.data)) {
				t.Errorf("%s, chunks %v: sniffed %+v (%d bytes), Detect %+v", tt.name, chunks, got, seen, want)
			}
		}
	}
}

// TestSnifferScanAcrossWrites plants signatures (plausible or not) around
// the edges of the writes and of the scan window, where the Sniffer holds
// back the bytes whose signatures need the bytes after them, and checks
// that it decides as Detect does.
func TestSnifferScanAcrossWrites(t *testing.T) {
	zipHeader := func(nameLen uint16) []byte {
		h := make([]byte, 30)
		copy(h, sigZipLocal)
		binary.LittleEndian.PutUint16(h[4:], 20)
		binary.LittleEndian.PutUint16(h[8:], 8)
		binary.LittleEndian.PutUint16(h[26:], nameLen)
		return h
	}
	sigs := [][]byte{zipHeader(5), zipHeader(0), sigRar4, sigRar5, {'7', 'z', 0xbc, 0xaf, 0x27, 0x1c, 0, 4},
		{'7', 'z', 0xbc, 0xaf, 0x27, 0x1c, 1, 4}, sigZipEOCD}
	rng := rand.New(rand.NewPCG(1, 2))
	const window = 200
	for i := range 3000 {
		data := make([]byte, 50+rng.IntN(400))
		for j := range data {
			data[j] = byte(rng.IntN(4)) // few distinct bytes: no accidental signatures
		}
		for range 1 + rng.IntN(3) {
			sig := sigs[rng.IntN(len(sigs))]
			at := rng.IntN(len(data))
			if rng.IntN(2) == 0 { // near the window's end
				at = max(0, window-len(sig)+rng.IntN(2*len(sig)))
			}
			copy(data[min(at, len(data)):], sig)
		}
		want, err := Detect(bytes.NewReader(data), int64(len(data)), "a.bin", window)
		if err != nil {
			t.Fatal(err)
		}
		chunks := []int{1 + rng.IntN(40), 1 + rng.IntN(3), 1 + rng.IntN(200)}
		if got, _ := sniff(data, "a.bin", window, chunks...); got != want {
			t.Fatalf("case %d, chunks %v: sniffed %+v, Detect %+v\n%q", i, chunks, got, want, data)
		}
	}
}

func TestSnifferKeepsLittleForArchives(t *testing.T) {
	s := NewSniffer(0)
	s.Write([]byte("PK\x03\x04\x14\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00"))
	s.Write(make([]byte, 10<<20))
	if len(s.head) > 16 || len(s.tail) != 0 {
		t.Errorf("kept %d head and %d tail bytes for a file with magic at offset 0", len(s.head), len(s.tail))
	}
	if d := s.Detect("x.rar"); d.Type != ZIP || d.ByName {
		t.Errorf("Detect = %+v", d)
	}
}
