package hoard

import (
	"reflect"
	"testing"
)

func TestKindOf(t *testing.T) {
	tests := []struct {
		typ  ArchiveType
		name string
		want Kind
	}{
		{ArchiveZIP, "Castle.zip", "ZIP"},
		{ArchiveRAR, "Goblin Camp.zip", "RAR"}, // the content decided
		{Archive7Z, "Knight.7z", "7Z"},
		{ArchiveDocument, "Dragon_Bust.STL", "STL"},
		{ArchiveDocument, "vase.obj", "OBJ"},
		{ArchiveDocument, "gem.3mf", "3MF"},
		{ArchiveDocument, "bracket.stp", "STEP"},
		{ArchiveDocument, "bracket.step", "STEP"},
		{ArchiveDocument, "Painting Guide.pdf", "PDF"},
		{ArchiveDocument, "notes", KindDocument},
		{ArchiveDocument, "weird.xyz", KindDocument},
	}
	for _, tt := range tests {
		if got := KindOf(tt.typ, tt.name); got != tt.want {
			t.Errorf("KindOf(%s, %q) = %s, want %s", tt.typ, tt.name, got, tt.want)
		}
		if got := (Package{ArchiveType: tt.typ, FileName: tt.name}).Kind(); got != tt.want {
			t.Errorf("Package.Kind of %q = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestParseKind(t *testing.T) {
	type parsed struct {
		Kind       Kind
		OK         bool
		Type       ArchiveType
		Extensions []string
	}
	tests := []struct {
		in   string
		want parsed
	}{
		{"zip", parsed{"ZIP", true, ArchiveZIP, nil}},
		{"7z", parsed{"7Z", true, Archive7Z, nil}},
		{"stl", parsed{"STL", true, ArchiveDocument, []string{".stl"}}},
		{" Step ", parsed{"STEP", true, ArchiveDocument, []string{".step", ".stp"}}},
		{"document", parsed{KindDocument, true, ArchiveDocument, nil}},
		{"tar", parsed{}},
		{"", parsed{}},
	}
	for _, tt := range tests {
		k, ok := ParseKind(tt.in)
		got := parsed{Kind: k, OK: ok}
		if ok {
			got.Type, got.Extensions = k.ArchiveType(), k.Extensions()
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseKind(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}
