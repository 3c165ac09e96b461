package archive

import (
	"bytes"
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
