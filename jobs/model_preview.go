package jobs

import (
	"bytes"
	"context"
	"io"
	"slices"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/mesh"
)

// MaxArchivedModelBytes is the largest model inside an archive that is
// rendered: it is extracted into memory (archive.Extract) before the
// renderer reads it. A model file posted on its own is read from the spool
// file, never into memory, up to mesh.DefaultMaxInputSize.
const MaxArchivedModelBytes = 64 << 20

// modelTries is how many model candidates of one archive are tried.
const modelTries = 2

// modelRenders lets one model preview be made at a time in this process: a
// render holds an extracted model (≤ MaxArchivedModelBytes), its vertices
// (≤ mesh.DefaultMaxMeshBytes) and a z-buffer, and keeps a CPU busy for up
// to mesh.DefaultMaxDuration, so concurrent ingestions queue here instead
// of multiplying that memory.
var modelRenders = make(chan struct{}, 1)

// modelPreviewIfNone returns preview when it holds an image, else the
// picture of the package's 3D model (modelPreview), else nil. inspect calls
// it once the posted photo and the archive's own images have had their turn.
func (d *inspector) modelPreviewIfNone(ctx context.Context, preview []byte, p *hoard.Package, at archive.Type, paths []string, entries []archive.Entry) []byte {
	if len(preview) > 0 {
		return preview
	}
	return d.modelPreview(ctx, p, at, paths, entries)
}

// modelPreview makes the preview of a package of 3D models from the bytes
// on disk: an STL, OBJ or 3MF file is read from its spool files; an archive
// gives up its best model (mesh.ChooseModel: a 3MF first, else the largest
// STL or OBJ up to MaxArchivedModelBytes). The picture is the 3MF's embedded
// thumbnail when it has one, else the model rendered (mesh.Thumbnail: the
// same view and shading for every package). Renders are bounded in memory
// and time by mesh's defaults, run one at a time (modelRenders), and a
// model that fails gives way to the next candidate; nil when none works. A
// failure is logged, never the package's.
func (d *inspector) modelPreview(ctx context.Context, p *hoard.Package, at archive.Type, paths []string, entries []archive.Entry) []byte {
	if at == archive.Document {
		format := mesh.Detect(p.FileName)
		if format == mesh.FormatUnknown {
			return nil
		}
		parts, err := archive.OpenParts(paths...)
		if err != nil {
			d.log.Info("model preview refused", "file", p.FileName, "err", err)
			return nil
		}
		defer parts.Close()
		return d.renderModel(ctx, p.FileName, parts, parts.Size(), format)
	}
	candidates := modelCandidates(entries)
	opts := mesh.Options{MaxInputSize: MaxArchivedModelBytes}
	for range modelTries {
		i := mesh.ChooseModel(candidates, opts)
		if i < 0 {
			return nil
		}
		entry := candidates[i].Path
		data, err := archive.Extract(ctx, at, paths, entry, archive.ExtractOptions{MaxSize: MaxArchivedModelBytes})
		if err == nil {
			if thumb := d.renderModel(ctx, p.FileName, bytes.NewReader(data), int64(len(data)), mesh.Detect(entry)); thumb != nil {
				return thumb
			}
		} else {
			d.log.Info("model preview refused", "file", p.FileName, "entry", hoard.StorableLongText(entry, 200), "err", err)
		}
		candidates = slices.Delete(candidates, i, i+1)
	}
	return nil
}

// modelCandidates are the archive's entries a model may be rendered from:
// files that are neither directories nor encrypted.
func modelCandidates(entries []archive.Entry) []mesh.Candidate {
	var out []mesh.Candidate
	for _, e := range entries {
		if !e.IsDir && !e.Encrypted && mesh.Detect(e.Path) != mesh.FormatUnknown {
			out = append(out, mesh.Candidate{Path: e.Path, Size: e.Size})
		}
	}
	return out
}

// renderModel returns the picture of one model (mesh.Thumbnail), or nil
// when it cannot be made (logged). It waits its turn in modelRenders.
func (d *inspector) renderModel(ctx context.Context, name string, r io.ReaderAt, size int64, format mesh.Format) []byte {
	select {
	case modelRenders <- struct{}{}:
		defer func() { <-modelRenders }()
	case <-ctx.Done():
		return nil
	}
	thumb, err := mesh.Thumbnail(ctx, r, size, format, mesh.Options{})
	if err != nil {
		d.log.Info("model preview refused", "file", name, "format", format.String(), "err", err)
		return nil
	}
	return thumb
}
