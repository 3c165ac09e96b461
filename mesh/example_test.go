package mesh_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/hoard/hoard/mesh"
)

// A model file on disk (a spooled download) gets its preview: a 3MF's own
// thumbnail, or a render. A failure is a note, never a failed ingestion.
func ExampleThumbnail() {
	name := "/data/spool/1234/Dragon Bust.stl"
	format := mesh.Detect(name)
	if format == mesh.FormatUnknown {
		return
	}
	f, err := os.Open(name)
	if err != nil {
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return
	}
	preview, err := mesh.Thumbnail(context.Background(), f, st.Size(), format, mesh.Options{})
	switch {
	case errors.Is(err, mesh.ErrMalformed), errors.Is(err, mesh.ErrEmpty), errors.Is(err, mesh.ErrTooLarge):
		slog.Info("no rendered preview", "file", name, "err", err)
	case err != nil:
		slog.Warn("no rendered preview", "file", name, "err", err)
	default:
		fmt.Println(mesh.ContentType, len(preview) > 0)
	}
}

// In an archive without pictures, ChooseModel names the entry to render.
func ExampleChooseModel() {
	entries := []mesh.Candidate{
		{Path: "Dragon/readme.txt", Size: 1200},
		{Path: "Dragon/base.stl", Size: 2_000_000},
		{Path: "Dragon/dragon_body.stl", Size: 48_000_000},
		{Path: "__MACOSX/Dragon/._dragon_body.stl", Size: 48_000_000},
	}
	if i := mesh.ChooseModel(entries, mesh.Options{}); i >= 0 {
		fmt.Println(entries[i].Path)
	}
	// Output: Dragon/dragon_body.stl
}
