package archive

import (
	"bytes"
	"io"
	"testing"
)

func TestPlanSplit(t *testing.T) {
	const MiB = 1 << 20
	const limit = 2000 * MiB
	tests := []struct {
		name    string
		parts   []PartInfo
		limit   int64
		names   []string
		lengths []int64
		err     bool
		file    string // name for new pieces; the first part's name when empty
	}{
		{"fits", []PartInfo{{"a.zip", 5 * MiB}}, limit, []string{"a.zip"}, []int64{5 * MiB}, false, ""},
		{"parts fit", []PartInfo{{"a.part1.rar", limit}, {"a.part2.rar", 3}}, limit, []string{"a.part1.rar", "a.part2.rar"}, []int64{limit, 3}, false, ""},
		{"just above", []PartInfo{{"a.zip", limit + 1}}, limit, []string{"a.zip.001", "a.zip.002"}, []int64{1000*MiB + SplitAlign, 1000*MiB - SplitAlign + 1}, false, ""},
		{"three", []PartInfo{{"a.zip", 5000 * MiB}}, limit, []string{"a.zip.001", "a.zip.002", "a.zip.003"}, []int64{1667 * MiB, 1667 * MiB, 1666 * MiB}, false, ""},
		{"a part too big re-splits", []PartInfo{{"a.7z.001", 3000 * MiB}, {"a.7z.002", 100 * MiB}}, limit, []string{"a.7z.001", "a.7z.002"}, []int64{1550 * MiB, 1550 * MiB}, false, "a.7z"},
		{"limit not aligned", []PartInfo{{"a", 10*MiB + 5}}, 3*MiB + 1000, []string{"a.001", "a.002", "a.003", "a.004"}, []int64{3 * MiB, 3 * MiB, 3 * MiB, MiB + 5}, false, ""},
		{"limit too small", []PartInfo{{"a", 10 * MiB}}, 1000, nil, nil, true, ""},
		{"no parts", nil, limit, nil, nil, true, ""},
		{"negative", []PartInfo{{"a", -1}}, limit, nil, nil, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := tt.file
			if name == "" && len(tt.parts) > 0 {
				name = tt.parts[0].Name
			}
			rs, err := PlanSplit(name, tt.limit, tt.parts)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v", err)
			}
			if err != nil {
				return
			}
			if len(rs) != len(tt.names) {
				t.Fatalf("got %+v", rs)
			}
			var off, total int64
			for _, p := range tt.parts {
				total += p.Size
			}
			for i, r := range rs {
				if r.Name != tt.names[i] || r.Length != tt.lengths[i] || r.Offset != off || r.Length > tt.limit {
					t.Errorf("range %d = %+v, want %s %d at %d", i, r, tt.names[i], tt.lengths[i], off)
				}
				if i < len(rs)-1 && r.Source < 0 && (r.Length%SplitAlign != 0 || r.Length != rs[0].Length) {
					t.Errorf("range %d length %d not aligned/equal", i, r.Length)
				}
				off += r.Length
			}
			if off != total {
				t.Errorf("ranges cover %d of %d", off, total)
			}
		})
	}
}

func TestPlanSplitProperties(t *testing.T) {
	for _, total := range []int64{1, SplitAlign - 1, SplitAlign, SplitAlign + 1, 7*SplitAlign + 3, 1 << 32, 4831838208} {
		for _, limit := range []int64{SplitAlign, SplitAlign + 7, 3 * SplitAlign, 1950 << 20, 2000 << 20} {
			rs, err := PlanSplit("f", limit, []PartInfo{{"f", total}})
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for i, r := range rs {
				inner := i < len(rs)-1
				for broken, bad := range map[string]bool{
					"empty":            r.Length <= 0,
					"over the limit":   r.Length > limit,
					"unaligned":        inner && r.Length%SplitAlign != 0,
					"unlike the first": inner && r.Length != rs[0].Length,
				} {
					if bad {
						t.Fatalf("total %d limit %d: range %d %+v is %s", total, limit, i, r, broken)
					}
				}
				sum += r.Length
			}
			if sum != total {
				t.Fatalf("total %d limit %d: sum %d", total, limit, sum)
			}
		}
	}
}

func TestPartsSection(t *testing.T) {
	parts := [][]byte{pseudoRandom(1000, 1), pseudoRandom(5, 2), nil, pseudoRandom(3000, 3)}
	all := bytes.Join(parts, nil)
	p, err := OpenParts(writeParts(t, t.TempDir(), "x", parts)...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Size() != int64(len(all)) || p.Len() != 4 {
		t.Fatal(p.Size(), p.Len())
	}
	for _, r := range []Range{{Offset: 0, Length: 4005}, {Offset: 990, Length: 20}, {Offset: 1003, Length: 3002}, {Offset: 4004, Length: 1}} {
		got, err := io.ReadAll(p.Section(r))
		if err != nil || !bytes.Equal(got, all[r.Offset:r.Offset+r.Length]) {
			t.Errorf("range %+v: %v", r, err)
		}
	}
	b := make([]byte, 10)
	if n, err := p.ReadAt(b, 4000); n != 5 || err != io.EOF {
		t.Errorf("read past end: %d %v", n, err)
	}
	if _, err := OpenParts(); err == nil {
		t.Error("no paths accepted")
	}
}

func TestFilesBytesReadCountsPartReads(t *testing.T) {
	parts := [][]byte{pseudoRandom(1000, 1), pseudoRandom(3000, 3)}
	p, err := OpenParts(writeParts(t, t.TempDir(), "x", parts)...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	before := FilesBytesRead()
	if _, err := io.ReadAll(p.Section(Range{Offset: 500, Length: 1000})); err != nil {
		t.Fatal(err)
	}
	ra, _ := p.Part(1)
	if _, err := ra.ReadAt(make([]byte, 100), 0); err != nil {
		t.Fatal(err)
	}
	// Other tests of the package may read parts concurrently: at least.
	if got := FilesBytesRead() - before; got < 1100 {
		t.Fatalf("counted %d bytes, want at least 1100", got)
	}
}
