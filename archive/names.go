package archive

import (
	"path"
	"strconv"
	"strings"
)

// Type is the kind of a package's file. Its values are the strings of the
// root package's ArchiveType, so callers convert with a plain conversion.
type Type string

// Types of candidate files. Unknown is the zero value: a name or a content
// that does not say which format it is.
const (
	Unknown  Type = ""
	ZIP      Type = "ZIP"
	RAR      Type = "RAR"
	SevenZ   Type = "7Z"
	Document Type = "DOCUMENT"
)

// IsArchive reports whether t is one of the archive types (ZIP, RAR, 7Z).
func (t Type) IsArchive() bool { return t == ZIP || t == RAR || t == SevenZ }

// Scheme names how a file name marks its place in a multi-part set.
type Scheme string

// Naming schemes of multi-part sets. Single is a file that is not a part.
const (
	Single           Scheme = "single"
	RarPart          Scheme = "rar-part"     // x.part1.rar, x.part2.rar, …
	RarVolume        Scheme = "rar-volume"   // x.rar, x.r00, x.r01, …
	ZipNumbered      Scheme = "zip-numbered" // x.zip.001, x.zip.002, … (7-Zip split)
	ZipSpanned       Scheme = "zip-spanned"  // x.z01, x.z02, …, x.zip (Info-ZIP split)
	SevenZipNumbered Scheme = "7z-numbered"  // x.7z.001, x.7z.002, …
	Numbered         Scheme = "numbered"     // x.001, x.002, … (byte split of any file)
)

// documentExts are the extensions of document files (SPEC rule 1, plus .stp,
// the other spelling of .step). A .3mf is a document although it is a ZIP.
var documentExts = map[string]bool{
	".pdf": true, ".stl": true, ".obj": true, ".3mf": true, ".step": true, ".stp": true,
	".blend": true, ".gcode": true, ".svg": true, ".dxf": true, ".ai": true, ".eps": true, ".psd": true,
}

var archiveExts = map[string]Type{".zip": ZIP, ".rar": RAR, ".7z": SevenZ}

// NameInfo is what a file name says about a candidate file.
type NameInfo struct {
	// Name is the file name as given.
	Name string
	// Type is the type the name implies: Unknown for a numbered part whose
	// inner name has no known extension (the content decides).
	Type Type
	// Scheme is the multi-part naming scheme, Single for a whole file.
	Scheme Scheme
	// Stem is the name without its part suffix: "x" for x.part2.rar, x.r00
	// and x.z01, "x.zip" for x.zip.002, "x.stl" for x.stl.003, the whole
	// name for a single file. Sets are keyed by scheme and lower-cased stem.
	Stem string
	// Base is the stem without its archive or document extension, the
	// human name of the package ("x").
	Base string
	// Number orders the part within its set: the written number for
	// numbered schemes, 0 for x.rar and n+1 for x.rNN (RarVolume), n for
	// x.zNN and -1 for the final x.zip of a ZipSpanned set (it sorts last).
	// 0 for a single file.
	Number int
	// Digits is the width of the written part number, used to name missing
	// parts.
	Digits int
}

// ParseName classifies a file name. ok is false when the file is not a
// candidate: neither an archive name (.zip, .rar, .7z or a multi-part name)
// nor a document extension. Matching is case-insensitive; only the base name
// of a path is considered.
func ParseName(name string) (info NameInfo, ok bool) {
	name = path.Base(strings.ReplaceAll(strings.TrimSpace(name), `\`, "/"))
	if name == "." || name == "/" || name == "" {
		return NameInfo{}, false
	}
	info = NameInfo{Name: name, Scheme: Single, Stem: name}
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 {
		return NameInfo{}, false
	}
	stem, ext := name[:dot], name[dot+1:]
	lext := strings.ToLower(ext)
	switch {
	case len(ext) >= 3 && len(ext) <= 6 && isDigits(ext):
		// x.zip.001, x.7z.001, x.<anything>.001
		info.Stem, info.Number, info.Digits = stem, atoi(ext), len(ext)
		inner := strings.ToLower(path.Ext(stem))
		switch {
		case inner == ".zip" && len(stem) > 4:
			info.Type, info.Scheme = ZIP, ZipNumbered
		case inner == ".7z" && len(stem) > 3:
			info.Type, info.Scheme = SevenZ, SevenZipNumbered
		default:
			info.Scheme = Numbered
			if t, isArchive := archiveExts[inner]; isArchive {
				info.Type = t
			} else if documentExts[inner] {
				info.Type = Document
			}
		}
	case (len(ext) == 3 || len(ext) == 4) && lext[0] == 'z' && isDigits(ext[1:]):
		// x.z01 … x.z99, x.z100 …
		info.Type, info.Scheme, info.Stem = ZIP, ZipSpanned, stem
		info.Number, info.Digits = atoi(ext[1:]), len(ext)-1
	case len(ext) == 3 && (lext[0] == 'r' || lext[0] == 's') && isDigits(ext[1:]):
		// x.r00 … x.r99, x.s00 … (after x.rar)
		info.Type, info.Scheme, info.Stem = RAR, RarVolume, stem
		info.Number, info.Digits = int(lext[0]-'r')*100+atoi(ext[1:])+1, 2
	case lext == "rar" && isRarPart(stem):
		// x.part1.rar
		i := strings.LastIndexByte(stem, '.')
		num := stem[i+5:]
		info.Type, info.Scheme, info.Stem = RAR, RarPart, stem[:i]
		info.Number, info.Digits = atoi(num), len(num)
	default:
		e := "." + lext
		if t, isArchive := archiveExts[e]; isArchive {
			info.Type = t
		} else if documentExts[e] {
			info.Type = Document
		} else {
			return NameInfo{}, false
		}
	}
	info.Base = trimKnownExt(info.Stem)
	if info.Base == "" {
		info.Base = info.Stem
	}
	return info, true
}

// isRarPart reports whether stem ends in ".partN" (1–5 digits) after a
// non-empty name.
func isRarPart(stem string) bool {
	i := strings.LastIndexByte(stem, '.')
	if i <= 0 || len(stem)-i < 6 || len(stem)-i > 10 {
		return false
	}
	return strings.EqualFold(stem[i+1:i+5], "part") && isDigits(stem[i+5:])
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}

// IsCandidate reports whether a file name makes the file a candidate for
// ingestion (see ParseName).
func IsCandidate(name string) bool {
	_, ok := ParseName(name)
	return ok
}

// NameType returns the type a candidate's name implies: Document for
// document extensions, the archive type of archive names, Unknown for a
// numbered part of unknown inner type and for non-candidates.
func NameType(name string) Type {
	info, _ := ParseName(name)
	return info.Type
}

// trimKnownExt removes one archive or document extension.
func trimKnownExt(s string) string {
	ext := strings.ToLower(path.Ext(s))
	if _, ok := archiveExts[ext]; ok || documentExts[ext] {
		return s[:len(s)-len(ext)]
	}
	return s
}

// partName returns the file name of part number n in the scheme of info,
// used to name missing parts in a set's reason.
func partName(info NameInfo, n int) string {
	d := max(info.Digits, 1)
	pad := func(n int) string {
		s := strconv.Itoa(n)
		for len(s) < d {
			s = "0" + s
		}
		return s
	}
	switch info.Scheme {
	case RarPart:
		return info.Stem + ".part" + pad(n) + ".rar"
	case RarVolume:
		if n == 0 {
			return info.Stem + ".rar"
		}
		letter := string(rune('r' + (n-1)/100))
		d = 2
		return info.Stem + "." + letter + pad((n-1)%100)
	case ZipSpanned:
		if n < 0 {
			return info.Stem + ".zip"
		}
		return info.Stem + ".z" + pad(n)
	case Single:
		return info.Name
	default:
		return info.Stem + "." + pad(n)
	}
}
