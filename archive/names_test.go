package archive

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseName(t *testing.T) {
	tests := []struct {
		name   string
		ok     bool
		typ    Type
		scheme Scheme
		stem   string
		base   string
		number int
	}{
		{"Dragon Bust.zip", true, ZIP, Single, "Dragon Bust.zip", "Dragon Bust", 0},
		{"pack.RAR", true, RAR, Single, "pack.RAR", "pack", 0},
		{"pack.7z", true, SevenZ, Single, "pack.7z", "pack", 0},
		{"model.stl", true, Document, Single, "model.stl", "model", 0},
		{"model.3MF", true, Document, Single, "model.3MF", "model", 0},
		{"part.stp", true, Document, Single, "part.stp", "part", 0},
		{"x.part1.rar", true, RAR, RarPart, "x", "x", 1},
		{"x.Part07.RAR", true, RAR, RarPart, "x", "x", 7},
		{"x.r00", true, RAR, RarVolume, "x", "x", 1},
		{"x.r12", true, RAR, RarVolume, "x", "x", 13},
		{"x.s01", true, RAR, RarVolume, "x", "x", 102},
		{"x.zip.001", true, ZIP, ZipNumbered, "x.zip", "x", 1},
		{"x.z01", true, ZIP, ZipSpanned, "x", "x", 1},
		{"x.Z10", true, ZIP, ZipSpanned, "x", "x", 10},
		{"x.7z.002", true, SevenZ, SevenZipNumbered, "x.7z", "x", 2},
		{"x.rar.003", true, RAR, Numbered, "x.rar", "x", 3},
		{"x.stl.001", true, Document, Numbered, "x.stl", "x", 1},
		{"movie.0001", true, Unknown, Numbered, "movie", "movie", 1},
		{"x.01", false, Unknown, "", "", "", 0},
		{"photo.jpg", false, Unknown, "", "", "", 0},
		{"readme.txt", false, Unknown, "", "", "", 0},
		{"noext", false, Unknown, "", "", "", 0},
		{"", false, Unknown, "", "", "", 0},
		{"dir/sub/x.zip", true, ZIP, Single, "x.zip", "x", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, ok := ParseName(tt.name)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			want := NameInfo{Type: tt.typ, Scheme: tt.scheme, Stem: tt.stem, Base: tt.base, Number: tt.number}
			if diff := cmp.Diff(want, info, cmpopts.IgnoreFields(NameInfo{}, "Name", "Digits")); diff != "" {
				t.Errorf("ParseName (-want +got):\n%s", diff)
			}
			if info.Type.IsArchive() != (tt.typ == ZIP || tt.typ == RAR || tt.typ == SevenZ) {
				t.Errorf("IsArchive wrong for %q", tt.typ)
			}
			if IsCandidate(tt.name) != tt.ok || NameType(tt.name) != tt.typ {
				t.Errorf("IsCandidate/NameType disagree")
			}
		})
	}
}
