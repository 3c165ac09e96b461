package archive

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hoard/hoard/archive/rarwriter"
)

func FuzzDetect(f *testing.F) {
	f.Add(makeZip(f, []testFile{{"a", []byte("a")}}, zipOpts{}), "a.zip")
	f.Add(makeRar([]rarwriter.File{{Name: "a", Data: []byte("a")}}, rarwriter.Options{Prefix: []byte("MZ")})[0], "a.exe")
	f.Add([]byte{'7', 'z', 0xbc, 0xaf, 0x27, 0x1c, 0, 4}, "x.7z.001")
	f.Add([]byte("x^this is text"), "x.rar")
	f.Add([]byte("PK\x05\x06"), "x.3mf")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		d, err := Detect(bytes.NewReader(data), int64(len(data)), name, 4096)
		if err != nil {
			t.Fatal(err)
		}
		switch d.Type {
		case Unknown, ZIP, RAR, SevenZ, Document:
		default:
			t.Fatalf("type %q", d.Type)
		}
		if NameType(name) == Document && d.Type != Document {
			t.Fatalf("document %q detected as %q", name, d.Type)
		}
		if d.Offset >= int64(len(data)) && len(data) > 0 {
			t.Fatalf("offset %d beyond %d bytes", d.Offset, len(data))
		}
		chunk := 1 + len(name)%97
		if s, _ := sniff(data, name, 4096, chunk, 3*chunk); s != d {
			t.Fatalf("a Sniffer fed %d-byte chunks decided %+v, Detect %+v", chunk, s, d)
		}
	})
}

// FuzzGroupSets feeds lines "name|size|id" to GroupSets and checks that
// every candidate message lands exactly once, in order.
func FuzzGroupSets(f *testing.F) {
	f.Add("x.part1.rar|10|1\nx.part3.rar|10|3\nx.part1.rar|10|4\nb.zip|5|2")
	f.Add("x.rar|1|1\nx.r00|1|2\nx.r02|1|3\ny.z01|1|4\ny.zip|1|5\nz.7z.001|1|6\nz.7z.001|2|7")
	f.Add("big.stl.001|9|1\nbig.stl.002|9|2\nm.3mf|1|3\nphoto.jpg|1|4\nq.zip.999999|1|5")
	f.Fuzz(func(t *testing.T, input string) {
		var msgs []Message
		for i, line := range strings.Split(input, "\n") {
			if i >= 2000 {
				break
			}
			fs := strings.Split(line, "|")
			m := Message{Name: fs[0], ID: int64(i), Date: t0.Add(time.Duration(i) * time.Second)}
			if len(fs) > 1 {
				m.Size, _ = strconv.ParseInt(fs[1], 10, 64)
			}
			if len(fs) > 2 {
				m.ID, _ = strconv.ParseInt(fs[2], 10, 64)
			}
			msgs = append(msgs, m)
		}
		sets := GroupSets(msgs)
		want := 0
		for _, m := range msgs {
			if IsCandidate(m.Name) {
				want++
			}
		}
		got := 0
		keys := map[string]bool{}
		for _, s := range sets {
			if keys[s.Key] {
				t.Fatalf("duplicate key %q", s.Key)
			}
			keys[s.Key] = true
			if len(s.Parts) == 0 {
				t.Fatalf("set %q without parts", s.Key)
			}
			got += len(s.Parts) + len(s.Duplicates) + len(s.Conflicts)
			var total int64
			for i, p := range s.Parts {
				total += p.Size
				if i > 0 && p.Number <= s.Parts[i-1].Number {
					t.Fatalf("set %q: parts out of order", s.Key)
				}
			}
			if total != s.TotalSize {
				t.Fatalf("set %q: total %d != %d", s.Key, s.TotalSize, total)
			}
			if s.Complete != (s.Reason == "") {
				t.Fatalf("set %q: complete %v reason %q", s.Key, s.Complete, s.Reason)
			}
		}
		if got != want {
			t.Fatalf("%d candidate messages, %d placed", want, got)
		}
	})
}

// listSeeds are archives of every supported kind, including the PPMd coder
// that once panicked under mutation.
func listSeeds(f *testing.F) [][]byte {
	// Small members keep inputs short, so that minimising a new input
	// does not eat the fuzzing time.
	files := []testFile{{"d/a.stl", bytes.Repeat([]byte("facet normal 0 0 1\n"), 8)}, {"cover.png", pseudoRandom(100, 1)}}
	seeds := [][]byte{
		makeZip(f, files, zipOpts{}),
		makeZip(f, files, zipOpts{prefix: []byte("MZ\x90\x00"), encrypted: map[string]bool{"cover.png": true}}),
		makeRar([]rarwriter.File{{Name: "d", Dir: true}, {Name: "d/a.stl", Data: files[0].data}, {Name: "cover.png", Data: files[1].data, Solid: true}}, rarwriter.Options{Solid: true})[0],
		bytes.Join(makeRar([]rarwriter.File{{Name: "a", Data: pseudoRandom(300, 2)}}, rarwriter.Options{VolumeSize: 100}), nil),
	}
	for _, sw := range [][]string{{"-mx=1"}, {"-m0=PPMd", "-ms=on"}, {"-m0=BZip2"}, {"-m0=Copy"}, {"-mx=1", "-psecret", "-mhe=off"}} {
		for _, p := range make7z(f, files, sw...) {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			seeds = append(seeds, b)
		}
	}
	return seeds
}

// FuzzList lists arbitrary bytes as every archive type, split in two parts
// at split, then extracts the chosen preview: nothing may panic or hang.
func FuzzList(f *testing.F) {
	for _, s := range listSeeds(f) {
		f.Add(s, uint32(0))
	}
	// A multi-volume RAR split at its volume boundary.
	vols := makeRar([]rarwriter.File{{Name: "a.png", Data: pseudoRandom(200, 3)}}, rarwriter.Options{VolumeSize: 100})
	f.Add(bytes.Join(vols, nil), uint32(len(vols[0])))
	f.Fuzz(func(t *testing.T, data []byte, split uint32) {
		chunks := [][]byte{data}
		if split > 0 && int(split) < len(data) {
			chunks = [][]byte{data[:split], data[split:]}
		}
		parts := newMemParts(chunks...)
		for _, typ := range []Type{ZIP, RAR, SevenZ} {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			l, err := listParts(ctx, typ, parts, ListOptions{MaxEntries: 1000, MaxDictionarySize: 4 << 20})
			cancel()
			if err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
			if len(l.Entries) > 1000 || (len(l.Entries) == 0 && l.Note == "" && l.Total != 0) {
				t.Fatalf("%s: %d entries, note %q", typ, len(l.Entries), l.Note)
			}
			target, ok := ChoosePreview(l.Entries)
			if !ok && len(l.Entries) > 0 {
				target = l.Entries[0]
			}
			if target.Path != "" {
				data, err := extractParts(context.Background(), typ, parts, target.Path,
					ExtractOptions{MaxSize: 1 << 20, MaxDecoded: 1 << 20, MaxInput: 8 << 20, Timeout: 5 * time.Second, MaxDictionarySize: 4 << 20})
				if err == nil && int64(len(data)) > 1<<20 {
					t.Fatalf("%s: extracted %d bytes over the limit", typ, len(data))
				}
			}
		}
	})
}

func FuzzChoosePreview(f *testing.F) {
	f.Add("a/cover.jpg\nb.png\n__MACOSX/._x.jpg\nthumb.gif/", uint64(5000))
	f.Add("x.webp\nrenders/y.JPEG", uint64(1<<30))
	f.Fuzz(func(t *testing.T, list string, seed uint64) {
		var es []Entry
		for i, p := range strings.Split(list, "\n") {
			es = append(es, Entry{Path: p, Size: int64((seed >> (i % 32)) % (16 << 20)), IsDir: strings.HasSuffix(p, "/")})
		}
		got, ok := ChoosePreview(es)
		if !ok {
			return
		}
		if !IsImageName(got.Path) || got.IsDir || got.Size > MaxPreviewSize {
			t.Fatalf("chose %+v", got)
		}
		rev := make([]Entry, len(es))
		for i, e := range es {
			rev[len(es)-1-i] = e
		}
		if again, _ := ChoosePreview(rev); again != got {
			t.Fatalf("order dependent: %+v vs %+v", again, got)
		}
	})
}

func FuzzCreator(f *testing.F) {
	f.Add("", false, "Mammoth Factory - 2026-01.part1.rar", "🔥 STL [Completed]")
	f.Add("Topic", false, "x.zip", "")
	f.Add("General", true, "Loot Studios - January 2024.zip", "Loot (Paid) - Archive")
	f.Add("", false, "\x80A-2000 1", "0")
	f.Add("\xd1", false, "\x80", "0")
	f.Fuzz(func(t *testing.T, topic string, general bool, file, title string) {
		got := Creator(topic, general, file, title)
		if got != strings.TrimSpace(got) {
			t.Fatalf("untrimmed %q", got)
		}
		if utf8.ValidString(topic) && utf8.ValidString(file) && utf8.ValidString(title) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 %q", got)
		}
		for _, r := range got {
			if isEmoji(r) && strings.TrimSpace(topic) == "" && CreatorFromFileName(file) == "" {
				t.Fatalf("emoji in %q", got)
			}
		}
		_, _ = MatchPhoto(0, file, t0, 0, []Photo{{ID: 1, Caption: title, Date: t0}})
	})
}
