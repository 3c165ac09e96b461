package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// TestSearchByKind: a document kind filters by the file name's extension,
// whatever its case, with and without a text; the extension's dot and LIKE
// wildcards match literally.
func TestSearchByKind(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	for _, spec := range []struct {
		name string
		typ  hoard.ArchiveType
	}{
		{"Dragon Bust.stl", hoard.ArchiveDocument},
		{"DRAGON WINGS.STL", hoard.ArchiveDocument},
		{"Dragon Guide.pdf", hoard.ArchiveDocument},
		{"Bracket.stp", hoard.ArchiveDocument},
		{"Bracket v2.step", hoard.ArchiveDocument},
		{"Dragon stl.zip", hoard.ArchiveZIP},
		{"Dragonxstl", hoard.ArchiveDocument},
	} {
		mustPackage(t, db, func(p *hoard.Package) { p.FileName, p.ArchiveType = spec.name, spec.typ })
	}
	tests := []struct {
		name string
		kind hoard.Kind
		text string
		want []string
	}{
		{"STL, no text", "STL", "", []string{"DRAGON WINGS.STL", "Dragon Bust.stl"}},
		{"STL with a text", "STL", "wings", []string{"DRAGON WINGS.STL"}},
		{"STEP has two extensions", "STEP", "", []string{"Bracket v2.step", "Bracket.stp"}},
		{"PDF", "PDF", "dragon", []string{"Dragon Guide.pdf"}},
		{"archives by type", "ZIP", "", []string{"Dragon stl.zip"}},
		{"a kind nothing has", "3MF", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := store.SearchQuery{Text: tt.text, ArchiveType: tt.kind.ArchiveType(), Extensions: tt.kind.Extensions(), Sort: store.SortNewest}
			res, err := db.SearchPackages(ctx, q)
			must(t, err)
			got := names(res)
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("hits %q, want %q", got, tt.want)
			}
		})
	}
}
