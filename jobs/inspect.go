package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive"
)

// inspector lists a set that was published and picks its preview: the
// archive's best image, else its 3D model's picture (model_preview.go).
// What it cannot read becomes an inspection note or no preview, never a
// failure of the set.
type inspector struct {
	log *slog.Logger
}

// inspect lists the spool files and picks the in-archive preview when the
// transfer has none (SPEC rules 5 and 10). A listing or preview that fails
// leaves an inspection note, never a failure. A draft that carries a note
// already was found unlistable when its type was detected
// (unlistableNote) and is not read again.
func (d *inspector) inspect(ctx context.Context, t *hoard.Transfer) (hoard.Package, []hoard.PackageFile, error) {
	p := t.Draft
	p.PreviewData = t.PreviewData
	at := archiveType(p.ArchiveType)
	listing := archive.Listing{Type: at, Note: p.InspectionNote}
	if p.InspectionNote == "" {
		var err error
		if listing, err = archive.List(ctx, at, t.SpoolPaths, archive.ListOptions{}); err != nil {
			return p, nil, err
		}
	}
	p.InspectionNote = listing.Note
	entries := archive.PackageFiles(p.FileName, p.FileSize, listing)
	files := make([]hoard.PackageFile, len(entries))
	for i, e := range entries {
		files[i] = hoard.PackageFile{Path: storedEntryPath(e.Path),
			Size: max(e.Size, 0), CompressedSize: max(e.CompressedSize, 0)}
		if e.HasCRC {
			crc := e.CRC32
			files[i].CRC32 = &crc
		}
	}
	if len(p.PreviewData) == 0 && at != archive.Document {
		p.PreviewData = d.archivePreview(ctx, at, t.SpoolPaths, listing.Entries, p.FileName)
	}
	p.PreviewData = d.modelPreviewIfNone(ctx, p.PreviewData, &p, at, t.SpoolPaths, listing.Entries)
	return p, files, nil
}

// storedEntryPath is the form an archive entry's path is stored in. Paths
// come from strangers' archives: archive lists them as they are (so that
// extraction finds the exact bytes) and they are made storable here, where
// they enter the catalog; extracting a stored entry later maps names the
// same way (archive.ExtractOptions.NameKey).
func storedEntryPath(raw string) string { return hoard.StorableLongText(raw, hoard.MaxEntryPathLen) }

// previewTries is how many preview candidates of one archive are tried.
const previewTries = 3

// archivePreview extracts the best preview image of an archive's listing
// and re-encodes it as a bounded JPEG (archive.MakeThumbnail, as manual
// extraction does): whatever the archive holds, browsers get at most an
// 800-pixel JPEG, and an image whose header declares too many pixels (a
// decompression bomb) is refused before a pixel is decoded. A candidate
// that cannot be extracted or decoded gives way to the next best, up to
// previewTries; nil when none works.
func (d *inspector) archivePreview(ctx context.Context, at archive.Type, paths []string, entries []archive.Entry, name string) []byte {
	var rest []archive.Entry
	for try := range previewTries {
		e, ok := archive.ChoosePreview(entries)
		if !ok {
			return nil
		}
		data, err := archive.Extract(ctx, at, paths, e.Path, archive.ExtractOptions{})
		if err == nil {
			data, err = archive.MakeThumbnail(ctx, data, archive.ThumbnailOptions{})
		}
		if err == nil {
			return data
		}
		d.log.Info("preview candidate refused", "file", name, "entry", hoard.StorableLongText(e.Path, 200), "try", try+1, "err", err)
		if rest == nil {
			rest = slices.Clone(entries)
		}
		rest = slices.DeleteFunc(rest, func(x archive.Entry) bool { return x.Path == e.Path })
		entries = rest
	}
	return nil
}

func archiveType(t hoard.ArchiveType) archive.Type {
	switch t {
	case hoard.ArchiveZIP:
		return archive.ZIP
	case hoard.ArchiveRAR:
		return archive.RAR
	case hoard.Archive7Z:
		return archive.SevenZ
	}
	return archive.Document
}

// detectType decides the type of a package of size bytes from its content,
// the name deciding when the content is not recognised: from what sniffed
// saw while the parts were downloaded or hashed when it saw every byte,
// else by reading the parts back.
func detectType(paths []string, size int64, name string, sniffed *archive.Sniffer) (archive.Detection, error) {
	if sniffed != nil && sniffed.Seen() == size {
		return sniffed.Detect(name), nil
	}
	parts, err := archive.OpenParts(paths...)
	if err != nil {
		return archive.Detection{}, err
	}
	defer parts.Close()
	return archive.Detect(parts, parts.Size(), name, 0)
}

// unlistableNote is the inspection note of an archive whose type came from
// its name alone: neither magic, nor a signature in the scan window, nor a
// ZIP directory record at the end, so no decoder can list it and inspection
// need not read it back to find that out. It is "" otherwise.
func unlistableNote(det archive.Detection, typ hoard.ArchiveType) string {
	if !det.ByName || typ == hoard.ArchiveDocument {
		return ""
	}
	return fmt.Sprintf("not listed: the content is not a recognisable %s archive", typ)
}

// catalogType is the catalog's archive type for t, or for what name tells
// when t is Unknown; a file neither tells about is a DOCUMENT.
func catalogType(t archive.Type, name string) hoard.ArchiveType {
	if t == archive.Unknown {
		t = archive.NameType(name)
	}
	switch t {
	case archive.ZIP:
		return hoard.ArchiveZIP
	case archive.RAR:
		return hoard.ArchiveRAR
	case archive.SevenZ:
		return hoard.Archive7Z
	}
	return hoard.ArchiveDocument
}

// draftPost is the source post of a transfer's draft; its category tag is
// the one ingestion put first.
func draftPost(p hoard.Package) hoard.PackageSource {
	tag := ""
	if len(p.Tags) > 0 {
		tag = p.Tags[0]
	}
	return p.Source(tag)
}
