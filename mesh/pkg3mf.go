package mesh

import (
	"archive/zip"
	"context"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// A 3MF file is an OPC package: a ZIP whose _rels/.rels names the model
// part (usually 3D/3dmodel.model) and perhaps a thumbnail
// (Metadata/thumbnail.png); a part's own relationships are in
// dir/_rels/name.rels.
const (
	relTypeModel     = "http://schemas.microsoft.com/3dmanufacturing/2013/01/3dmodel"
	relTypeThumbnail = "http://schemas.openxmlformats.org/package/2006/relationships/metadata/thumbnail"
	defaultModelPart = "3d/3dmodel.model"
	defaultThumbnail = "metadata/thumbnail.png"
)

// Bounds of the package's structure.
const (
	maxZipDirectory  = 4 << 20 // bytes of the ZIP central directory
	maxZipEntries    = 65536
	maxRelationships = 1024
	maxXMLDepth      = 32
)

// pkg3MF is an opened 3MF package: its parts by normalised name.
type pkg3MF struct {
	parts  map[string]*zip.File
	budget int64 // bytes its parts may still decompress to
}

// partName normalises an OPC part name for lookup: no leading slash,
// forward slashes, lower case (OPC names are case-insensitive).
func partName(name string) string {
	return strings.ToLower(strings.TrimPrefix(strings.ReplaceAll(name, `\`, "/"), "/"))
}

func openPackage(r io.ReaderAt, size int64, opts Options) (*pkg3MF, error) {
	if err := checkZipDirectory(r, size); err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // names are only looked up, never written
		return nil, fmt.Errorf("not a readable ZIP package: %w: %w", err, ErrMalformed)
	}
	p := &pkg3MF{parts: make(map[string]*zip.File, len(zr.File)), budget: opts.MaxInputSize}
	for _, f := range zr.File {
		p.parts[partName(f.Name)] = f
	}
	return p, nil
}

// checkZipDirectory refuses a ZIP whose end record declares a central
// directory or an entry count over the bounds before archive/zip allocates
// for them. A ZIP without an end record is left to archive/zip to refuse.
func checkZipDirectory(r io.ReaderAt, size int64) error {
	const endLen, zip64LocatorLen, zip64EndLen = 22, 20, 56
	tail := make([]byte, min(size, endLen+65535))
	tailOff := size - int64(len(tail))
	if _, err := r.ReadAt(tail, tailOff); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read the ZIP end record: %w", err)
	}
	at := -1
	for i := len(tail) - endLen; i >= 0; i-- {
		if string(tail[i:i+4]) == "PK\x05\x06" && i+endLen+int(binary.LittleEndian.Uint16(tail[i+20:])) <= len(tail) {
			at = i
			break
		}
	}
	if at < 0 {
		return nil
	}
	entries := uint64(binary.LittleEndian.Uint16(tail[at+10:]))
	dirSize := uint64(binary.LittleEndian.Uint32(tail[at+12:]))
	if entries == 0xffff || dirSize == 0xffffffff {
		loc := make([]byte, zip64LocatorLen)
		end := make([]byte, zip64EndLen)
		if locOff := tailOff + int64(at) - zip64LocatorLen; locOff >= 0 {
			if _, err := r.ReadAt(loc, locOff); err == nil && string(loc[:4]) == "PK\x06\x07" {
				if endOff := binary.LittleEndian.Uint64(loc[8:]); endOff < uint64(size) {
					if _, err := r.ReadAt(end, int64(endOff)); err == nil && string(end[:4]) == "PK\x06\x06" {
						entries = binary.LittleEndian.Uint64(end[32:])
						dirSize = binary.LittleEndian.Uint64(end[40:])
					}
				}
			}
		}
	}
	if entries > maxZipEntries || dirSize > maxZipDirectory {
		return fmt.Errorf("a ZIP directory of %d entries in %d bytes, over the limits of %d and %d: %w",
			entries, dirSize, maxZipEntries, maxZipDirectory, ErrTooLarge)
	}
	return nil
}

// open returns the decompressed bytes of a part; walkXML bounds them.
func (p *pkg3MF) open(name string) (io.ReadCloser, error) {
	f, ok := p.parts[partName(name)]
	if !ok {
		return nil, fmt.Errorf("no part %q", name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("open part %q: %w: %w", name, err, ErrMalformed)
	}
	return rc, nil
}

// walkXML reads one XML part through an xmlGuard and calls fn with each
// start element and its parent's local name, and end with each end
// element's local name. It checks that ends match starts and bounds the
// depth.
func (p *pkg3MF) walkXML(ctx context.Context, part string, start func(e *xml.StartElement, parent string) error, end func(name string) error) error {
	rc, err := p.open(part)
	if err != nil {
		return err
	}
	defer rc.Close()
	d := xml.NewDecoder(&xmlGuard{ctx: ctx, r: rc, budget: &p.budget})
	var stack []string
	for {
		tok, err := d.RawToken()
		if errors.Is(err, io.EOF) {
			if len(stack) != 0 {
				return fmt.Errorf("%s: xml: <%s> not closed: %w", part, stack[len(stack)-1], ErrMalformed)
			}
			return nil
		}
		if err != nil {
			if errors.Is(err, ErrTooLarge) || errors.Is(err, ErrMalformed) || ctx.Err() != nil {
				return fmt.Errorf("%s: %w", part, err)
			}
			return fmt.Errorf("%s: %w: %w", part, err, ErrMalformed)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) == maxXMLDepth {
				return fmt.Errorf("%s: xml: elements nested deeper than %d: %w", part, maxXMLDepth, ErrMalformed)
			}
			parent := ""
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			stack = append(stack, t.Name.Local)
			if err := start(&t, parent); err != nil {
				return fmt.Errorf("%s: %w", part, err)
			}
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1] != t.Name.Local {
				return fmt.Errorf("%s: xml: unexpected </%s>: %w", part, t.Name.Local, ErrMalformed)
			}
			stack = stack[:len(stack)-1]
			if end != nil {
				if err := end(t.Name.Local); err != nil {
					return fmt.Errorf("%s: %w", part, err)
				}
			}
		}
	}
}

// attr returns the value of the attribute with the local name, or "".
func attr(e *xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// relationships returns the targets of the relationships of a part ("" for
// the package) of one type, resolved to part names, in document order. A
// missing relationships part gives none.
func (p *pkg3MF) relationships(ctx context.Context, part, relType string) ([]string, error) {
	dir, base := path.Split(partName(part))
	relsPart := dir + "_rels/" + base + ".rels"
	if _, ok := p.parts[relsPart]; !ok {
		return nil, nil
	}
	var targets []string
	n := 0
	err := p.walkXML(ctx, relsPart, func(e *xml.StartElement, _ string) error {
		if e.Name.Local != "Relationship" {
			return nil
		}
		if n++; n > maxRelationships {
			return fmt.Errorf("more than %d relationships: %w", maxRelationships, ErrTooLarge)
		}
		if attr(e, "Type") == relType {
			target := attr(e, "Target")
			if !strings.HasPrefix(target, "/") {
				target = path.Join("/"+dir, target)
			}
			targets = append(targets, partName(target))
		}
		return nil
	}, nil)
	return targets, err
}

// modelPart returns the name of the package's model part: the one the
// package relationships name, else 3D/3dmodel.model.
func (p *pkg3MF) modelPart(ctx context.Context) (string, error) {
	targets, err := p.relationships(ctx, "", relTypeModel)
	if err != nil {
		return "", err
	}
	for _, t := range append(targets, defaultModelPart) {
		if _, ok := p.parts[t]; ok {
			return t, nil
		}
	}
	return "", fmt.Errorf("a ZIP without a 3MF model part (%s): %w", defaultModelPart, ErrNotModel)
}

// thumbnailPart returns the name of the package's thumbnail: the one the
// package relationships name, else one the model part's relationships
// name, else Metadata/thumbnail.png.
func (p *pkg3MF) thumbnailPart(ctx context.Context) (string, error) {
	targets, err := p.relationships(ctx, "", relTypeThumbnail)
	if err != nil {
		return "", err
	}
	if model, err := p.modelPart(ctx); err == nil {
		more, err := p.relationships(ctx, model, relTypeThumbnail)
		if err != nil {
			return "", err
		}
		targets = append(targets, more...)
	}
	for _, t := range append(targets, defaultThumbnail) {
		if _, ok := p.parts[t]; ok {
			return t, nil
		}
	}
	return "", fmt.Errorf("3mf: %w", ErrNoThumbnail)
}
