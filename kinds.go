package hoard

import (
	"path"
	"strings"
)

// Kind is the kind of file people think in: ZIP, RAR or 7Z for an archive,
// and for a document its format, told by its extension (STL, OBJ, 3MF,
// STEP, PDF, …). The catalog shows and filters by kinds; the stored
// ArchiveType of every document stays DOCUMENT (SPEC: ArchiveType).
type Kind string

// Kinds lists every kind in display order: archives first, then 3D models,
// then other documents. KindDocument is a document of no known format.
var Kinds = []Kind{"ZIP", "RAR", "7Z", "STL", "OBJ", "3MF", "STEP", "BLEND", "GCODE", "PDF", "SVG", "DXF", "AI", "EPS", "PSD"}

// KindDocument is the kind of a document whose extension names no format
// of Kinds.
const KindDocument Kind = "DOCUMENT"

// kindExtensions are the file extensions of each document kind.
var kindExtensions = map[Kind][]string{
	"STL": {".stl"}, "OBJ": {".obj"}, "3MF": {".3mf"}, "STEP": {".step", ".stp"}, "BLEND": {".blend"},
	"GCODE": {".gcode"}, "PDF": {".pdf"}, "SVG": {".svg"}, "DXF": {".dxf"}, "AI": {".ai"}, "EPS": {".eps"}, "PSD": {".psd"},
}

// KindOf returns the kind of a package of archive type t called fileName:
// t itself for an archive, the format of the name's extension (case does
// not matter) for a document, KindDocument when it names none.
func KindOf(t ArchiveType, fileName string) Kind {
	if t != ArchiveDocument {
		return Kind(t)
	}
	ext := strings.ToLower(path.Ext(fileName))
	for k, exts := range kindExtensions {
		for _, e := range exts {
			if e == ext {
				return k
			}
		}
	}
	return KindDocument
}

// Kind returns the package's kind (KindOf).
func (p Package) Kind() Kind { return KindOf(p.ArchiveType, p.FileName) }

// ParseKind reads a kind as a filter names it, case-insensitively: one of
// Kinds, or an ArchiveType (DOCUMENT: every document).
func ParseKind(s string) (Kind, bool) {
	k := Kind(strings.ToUpper(strings.TrimSpace(s)))
	if k == KindDocument || oneOf(k, Kinds) {
		return k, true
	}
	return "", false
}

// ArchiveType returns the stored archive type of packages of this kind.
func (k Kind) ArchiveType() ArchiveType {
	if t := ArchiveType(k); t.Valid() {
		return t
	}
	return ArchiveDocument
}

// Extensions returns the file extensions (lower case, with the dot) of a
// document format's kind; nil for archives and KindDocument.
func (k Kind) Extensions() []string { return kindExtensions[k] }
