package grouping

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// genericWords say nothing about which design or release a package is: a
// caption, root folder or name prefix made only of them carries no weight
// ("New release!", "STL/", "Supported STL/", "files").
var genericWords = map[string]bool{
	"stl": true, "stls": true, "obj": true, "3mf": true, "file": true, "files": true, "folder": true,
	"new": true, "release": true, "releases": true, "model": true, "models": true, "print": true,
	"prints": true, "supported": true, "unsupported": true, "presupported": true, "pre": true,
	"sup": true, "unsup": true, "export": true, "output": true, "image": true, "images": true,
	"render": true, "renders": true, "enjoy": true, "download": true, "downloads": true,
	"update": true, "updated": true, "free": true, "upload": true, "reupload": true, "misc": true,
	"here": true, "is": true, "the": true, "a": true, "and": true, "for": true, "of": true,
}

// allGeneric reports whether every word (run of letters and digits) of s is
// generic, case-insensitively; an s without words is. It does not allocate.
func allGeneric(s string) bool {
	var buf [16]byte
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isAlnum(r) {
			i += size
			continue
		}
		n := 0
		for i < len(s) {
			r, size = utf8.DecodeRuneInString(s[i:])
			if !isAlnum(r) {
				break
			}
			if r >= utf8.RuneSelf || n == len(buf) {
				return false // no generic word is that long or non-ASCII
			}
			buf[n] = lowerASCII(byte(r))
			n++
			i += size
		}
		if !genericWords[string(buf[:n])] {
			return false
		}
	}
	return true
}

// genericCaption reports whether a caption is one a channel puts on any post
// ("New release!", "Enjoy"): no word of it names anything.
func genericCaption(caption string) bool { return allGeneric(caption) }

// variantWords are the file-name words that name a variant of a design, by
// normalised word: the label they give.
var variantWords = map[string]string{
	"supported": "supported", "unsupported": "unsupported", "presupported": "presupported",
	"presup": "presupported", "remix": "remix", "remixed": "remix",
}

// reuploadWords mark a re-post of the same file; they belong to no variant
// and to no design.
var reuploadWords = map[string]bool{"reupload": true, "reuploaded": true, "fixed": true}

// nameWord is one word of a file name: a run of letters and digits, with a
// dot between digits kept ("v1.2").
type nameWord struct {
	start, end int
	norm       string
}

func nameWords(s string) []nameWord {
	var out []nameWord
	start := -1
	for i, r := range s {
		inWord := isAlnum(r) || (r == '.' && start >= 0 && i > 0 && isDigit(s[i-1]) && i+1 < len(s) && isDigit(s[i+1]))
		switch {
		case inWord && start < 0:
			start = i
		case !inWord && start >= 0:
			out = append(out, nameWord{start: start, end: i, norm: strings.ToLower(s[start:i])})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, nameWord{start: start, end: len(s), norm: strings.ToLower(s[start:])})
	}
	return out
}

// variantOf classifies words[k]: the variant label it gives ("" = none), how
// many words it spans, and whether it is a re-upload marker.
func variantOf(words []nameWord, k int) (label string, n int, reupload bool) {
	w := words[k].norm
	next := ""
	if k+1 < len(words) {
		next = words[k+1].norm
	}
	switch {
	case variantWords[w] != "":
		return variantWords[w], 1, false
	case w == "pre" && (next == "supported" || next == "sup"):
		return "presupported", 2, false
	case (w == "no" || w == "without") && (next == "supports" || next == "support"):
		return "unsupported", 2, false
	case reuploadWords[w]:
		return "", 1, true
	case w == "re" && (next == "upload" || next == "uploaded"):
		return "", 2, true
	case len(w) > 2 && strings.HasSuffix(w, "mm") && digitsOnly(w[:len(w)-2]):
		return w, 1, false // a scale: 32mm, 75mm
	case digitsOnly(w) && next == "mm":
		return w + "mm", 2, false
	case len(w) > 1 && w[0] == 'v' && isDigit(w[1]) && versionDigits(w[1:]):
		return w, 1, false // v2, v1.1
	}
	return "", 1, false
}

func digitsOnly(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func versionDigits(s string) bool {
	for part := range strings.SplitSeq(s, ".") {
		if !digitsOnly(part) {
			return false
		}
	}
	return true
}

// VariantLabel returns the variant of a design that a package's file name
// names: "supported", "unsupported", "presupported", a scale ("75mm"), a
// version ("v2") or "remix", several joined by a space in the order they
// appear ("75mm supported"), "" when the name names none. Re-upload markers
// ("(reupload)", "fixed") are no variant. Packages whose names differ only
// in their variants are variants of one design, which the grouping keeps
// together.
func VariantLabel(fileName string) string {
	base := baseName(fileName)
	words := nameWords(base)
	var labels []string
	for k := 0; k < len(words); {
		label, n, _ := variantOf(words, k)
		if label != "" && !containsString(labels, label) {
			labels = append(labels, label)
		}
		k += n
	}
	return strings.Join(labels, " ")
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// designName is a file name without its extensions, variant labels and
// re-upload markers, separators and emptied brackets tidied: "Wyvern Rider -
// Supported (reupload).zip" → "Wyvern Rider", "Sand Worm 75mm.zip" → "Sand
// Worm". A name that is nothing but a variant gives "".
func designName(fileName string) string {
	base := baseName(fileName)
	words := nameWords(base)
	var b strings.Builder
	last := 0
	cut := false
	for k := 0; k < len(words); {
		label, n, reupload := variantOf(words, k)
		if label != "" || reupload {
			b.WriteString(base[last:words[k].start])
			b.WriteByte(' ')
			last = words[k+n-1].end
			cut = true
		}
		k += n
	}
	if !cut {
		return trimSeparators(base)
	}
	b.WriteString(base[last:])
	return tidyName(b.String())
}

// tidyName drops brackets left empty, collapses runs of separators to the
// first of them and trims the ends.
func tidyName(s string) string {
	for _, pair := range []string{"()", "[]", "{}"} {
		for {
			open := strings.IndexByte(s, pair[0])
			if open < 0 {
				break
			}
			close := strings.IndexByte(s[open:], pair[1])
			if close < 0 || strings.IndexFunc(s[open+1:open+close], isAlnum) >= 0 {
				break
			}
			s = s[:open] + " " + s[open+close+1:]
		}
	}
	var b strings.Builder
	for _, f := range strings.Fields(s) {
		if strings.IndexFunc(f, isAlnum) < 0 {
			// A separator on its own: keep it only between two words.
			if b.Len() == 0 {
				continue
			}
			if r, _ := utf8.DecodeLastRuneInString(b.String()); !isAlnum(r) && r != ')' && r != ']' {
				continue
			}
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
	}
	return trimSeparators(b.String())
}

// designKey is the normalised design name of a normalised base file name
// (normalize(baseName(name))): its words without variant labels and
// re-upload markers (the words of a dotted version such as "v1.2" come
// apart in normalised names and are dropped together). It is "" when it is
// shorter than 3 characters or only generic words: too little to call two
// files one design. A name without variant words is its own key, without
// allocating.
func designKey(norm string) string {
	key := norm
	if mayHoldVariant(norm) {
		var buf [32]nameWord
		words := normWords(norm, buf[:0])
		var b strings.Builder
		afterVersion := false
		for k := 0; k < len(words); {
			if afterVersion && digitsOnly(words[k].norm) {
				k++
				continue
			}
			label, n, reupload := variantOf(words, k)
			afterVersion = label != "" && label[0] == 'v'
			if label == "" && !reupload {
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[k].norm)
			}
			k += n
		}
		key = b.String()
	}
	if utf8.RuneCountInString(key) < 3 || allGeneric(key) {
		return ""
	}
	return key
}

// normWords appends the words of a normalised name (space-separated, lower
// case already) to dst without copying them.
func normWords(norm string, dst []nameWord) []nameWord {
	start := 0
	for i := 0; i <= len(norm); i++ {
		if i == len(norm) || norm[i] == ' ' {
			if i > start {
				dst = append(dst, nameWord{start: start, end: i, norm: norm[start:i]})
			}
			start = i + 1
		}
	}
	return dst
}

// variantStart marks the bytes a word designKey may drop starts with: a
// digit or the first letter of a variant or re-upload word.
var variantStart = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, w := range []string{"v", "pre", "no", "without", "re"} {
		t[w[0]] = true
	}
	for w := range variantWords {
		t[w[0]] = true
	}
	for w := range reuploadWords {
		t[w[0]] = true
	}
	return t
}()

// mayHoldVariant reports whether a normalised name has a variant label or
// re-upload marker (see variantOf); most names have none, and designKey then
// needs no copy. It does not allocate.
func mayHoldVariant(norm string) bool {
	prev := ""
	for len(norm) > 0 {
		w := norm
		if i := strings.IndexByte(norm, ' '); i >= 0 {
			w, norm = norm[:i], norm[i+1:]
		} else {
			norm = ""
		}
		switch {
		case markerWord(w),
			prev == "pre" && (w == "supported" || w == "sup"),
			(prev == "no" || prev == "without") && (w == "supports" || w == "support"),
			prev == "re" && (w == "upload" || w == "uploaded"),
			w == "mm" && digitsOnly(prev),
			len(w) > 2 && strings.HasSuffix(w, "mm") && digitsOnly(w[:len(w)-2]),
			len(w) > 1 && w[0] == 'v' && digitsOnly(w[1:]):
			return true
		}
		prev = w
	}
	return false
}

// mayHoldVariantBytes is mayHoldVariant of a normalised name held in a
// buffer; it does not allocate.
func mayHoldVariantBytes(norm []byte) bool {
	var prev []byte
	for len(norm) > 0 {
		w := norm
		if i := bytes.IndexByte(norm, ' '); i >= 0 {
			w, norm = norm[:i], norm[i+1:]
		} else {
			norm = nil
		}
		p := string(prev) // compared only: no copy
		switch {
		case markerWord(string(w)),
			p == "pre" && (string(w) == "supported" || string(w) == "sup"),
			(p == "no" || p == "without") && (string(w) == "supports" || string(w) == "support"),
			p == "re" && (string(w) == "upload" || string(w) == "uploaded"),
			string(w) == "mm" && digitBytes(prev),
			len(w) > 2 && w[len(w)-2] == 'm' && w[len(w)-1] == 'm' && digitBytes(w[:len(w)-2]),
			len(w) > 1 && w[0] == 'v' && digitBytes(w[1:]):
			return true
		}
		prev = w
	}
	return false
}

func digitBytes(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// markerWord reports whether w alone is a variant or re-upload word (the
// keys of variantWords and reuploadWords; a switch spares the map lookups on
// the hot path).
func markerWord(w string) bool {
	switch w {
	case "supported", "unsupported", "presupported", "presup", "remix", "remixed", "reupload", "reuploaded", "fixed":
		return true
	}
	return false
}
