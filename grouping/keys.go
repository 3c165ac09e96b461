package grouping

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// normalize lower-cases s and turns every run of characters that are not
// letters or digits into one space, trimmed: "Mammoth_Factory - Dragon" →
// "mammoth factory dragon".
func normalize(s string) string {
	return string(appendNormalized(make([]byte, 0, len(s)), s))
}

// appendNormalized appends normalize(s) to dst.
func appendNormalized(dst []byte, s string) []byte {
	start := len(dst)
	gap := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			default:
				gap = true
				continue
			}
			if gap && len(dst) > start {
				dst = append(dst, ' ')
			}
			gap = false
			dst = append(dst, c)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			gap = true
			continue
		}
		if gap && len(dst) > start {
			dst = append(dst, ' ')
		}
		gap = false
		dst = utf8.AppendRune(dst, unicode.ToLower(r))
	}
	return dst
}

// knownExt are archive, document and model extensions stripped from names.
var knownExt = map[string]bool{
	"zip": true, "rar": true, "7z": true, "tar": true, "gz": true, "tgz": true, "bz2": true, "xz": true,
	"zst": true, "pdf": true, "epub": true, "mobi": true, "djvu": true, "cbz": true, "cbr": true,
	"stl": true, "3mf": true, "step": true, "stp": true, "obj": true, "lys": true, "chitubox": true,
	"ctb": true, "blend": true, "fbx": true,
}

// isStrippableExt reports whether ext (lower-case, no dot) is a known
// extension or a split-part suffix (001, part1, z01, r01).
func isStrippableExt(ext string) bool {
	if knownExt[ext] {
		return true
	}
	digits := func(s string) bool {
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
	switch {
	case len(ext) == 3 && digits(ext):
		return true
	case strings.HasPrefix(ext, "part") && len(ext) <= 7 && digits(ext[4:]):
		return true
	case len(ext) == 3 && (ext[0] == 'z' || ext[0] == 'r') && digits(ext[1:]):
		return true
	}
	return false
}

// baseName strips a trailing chain of known extensions and split suffixes:
// "Dragon.part01.rar" → "Dragon", "Pack.7z.001" → "Pack".
func baseName(name string) string {
	name = strings.TrimSpace(name)
	for range 3 {
		dot := strings.LastIndexByte(name, '.')
		if dot <= 0 || !isStrippableExt(strings.ToLower(name[dot+1:])) {
			break
		}
		name = strings.TrimSpace(name[:dot])
	}
	return name
}

// displayName is a file name fit to name a group: known extensions
// stripped, or else one short alphanumeric extension.
func displayName(name string) string {
	b := baseName(name)
	if b == strings.TrimSpace(name) {
		if dot := strings.LastIndexByte(b, '.'); dot > 0 {
			ext := b[dot+1:]
			ok := len(ext) >= 1 && len(ext) <= 5
			letter := false
			for i := 0; ok && i < len(ext); i++ {
				c := ext[i] | 0x20
				letter = letter || ('a' <= c && c <= 'z')
				ok = ('a' <= c && c <= 'z') || ('0' <= ext[i] && ext[i] <= '9')
			}
			if ok && letter {
				b = b[:dot]
			}
		}
	}
	if b = trimSeparators(b); b == "" {
		return "Unnamed group"
	}
	return b
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// isSeparator reports the characters trimmed from the ends of names.
func isSeparator(r rune) bool {
	return unicode.IsSpace(r) || strings.ContainsRune("_-.–—,;:+~|/\\#(", r)
}

// trimSeparators trims separators at both ends; a closing bracket is kept at
// the end, an opening one is dropped.
func trimSeparators(s string) string {
	return strings.TrimFunc(s, isSeparator)
}

// NameFor names a group from its members: their common file-name prefix
// (case-insensitive, cut back to a word boundary where that leaves at least
// 3 characters, trimmed of separators) if it has at least 3 characters, else
// the first member's file name without extension. A prefix of generic words
// only ("STL", "New") names nothing and is not used. Members are taken in
// (PostedAt, SourceMessageID, ID) order; no members gives "Unnamed group".
func NameFor(members []Package) string {
	if len(members) == 0 {
		return "Unnamed group"
	}
	m := slices.Clone(members)
	slices.SortFunc(m, func(a, b Package) int {
		if c := a.PostedAt.Compare(b.PostedAt); c != 0 {
			return c
		}
		return byMessage(a, b)
	})
	names := make([]string, len(m))
	for i, p := range m {
		names[i] = baseName(p.FileName)
	}
	if len(names) > 1 {
		if p := commonPrefix(names, 3); utf8.RuneCountInString(p) >= 3 && !allGeneric(p) {
			return p
		}
	}
	return displayName(m[0].FileName)
}

// commonPrefix returns names[0]'s prefix that every name shares
// (case-insensitively), cut back to the last word boundary when it ends
// inside a word and the cut leaves at least min runes, trimmed of
// separators.
func commonPrefix(names []string, min int) string {
	first := names[0]
	end := len(first)
	for _, n := range names[1:] {
		end = sharedLen(first[:end], n)
	}
	p := first[:end]
	last, _ := utf8.DecodeLastRuneInString(p)
	if p != "" && isAlnum(last) {
		midWord := false
		for _, n := range names {
			// The shared part has the same length in runes in every name,
			// but not necessarily in bytes: walk runes.
			rest := skipRunes(n, utf8.RuneCountInString(p))
			if r, _ := utf8.DecodeRuneInString(rest); rest != "" && isAlnum(r) {
				midWord = true
				break
			}
		}
		if midWord {
			cut := strings.LastIndexFunc(p, func(r rune) bool { return !isAlnum(r) })
			if cut > 0 {
				if c := trimSeparators(p[:cut]); utf8.RuneCountInString(c) >= min {
					p = c
				}
			}
		}
	}
	return trimSeparators(p)
}

func skipRunes(s string, n int) string {
	for ; n > 0 && s != ""; n-- {
		_, size := utf8.DecodeRuneInString(s)
		s = s[size:]
	}
	return s
}

// sharedLen is the byte length of a's longest prefix that b shares,
// comparing runes case-insensitively.
func sharedLen(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ra, sa := utf8.DecodeRuneInString(a[i:])
		rb, sb := utf8.DecodeRuneInString(b[j:])
		if ra != rb && unicode.ToLower(ra) != unicode.ToLower(rb) {
			break
		}
		i += sa
		j += sb
	}
	return i
}

// months maps English month names (full, 3-letter, "sept") to 1..12.
var months = map[string]int{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
	"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
	"oct": 10, "nov": 11, "dec": 12,
}

// PatternKey extracts the grouping pattern of a file name: a date
// (YYYY-MM, YYYY_MM, YYYY.MM, or an English month name next to a year) as
// "YYYY-MM", else the project prefix before " - ", " – " or "(" (at least 5
// characters) normalised to lower case, else "". Years run 1950–2099.
func PatternKey(fileName string) string {
	base := baseName(fileName)
	if k := numericDate(base); k != "" {
		return k
	}
	if k := monthNameDate(base); k != "" {
		return k
	}
	if p := patternPrefix(base); p != "" {
		return normalize(p)
	}
	return ""
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func yearOK(y int) bool { return 1950 <= y && y <= 2099 }

func dateKey(y, m int) string {
	return strconv.Itoa(y) + "-" + string([]byte{byte('0' + m/10), byte('0' + m%10)})
}

// numericDate finds YYYY[-_.]MM not glued to further digits.
func numericDate(s string) string {
	for i := 0; i+7 <= len(s); i++ {
		if i > 0 && isDigit(s[i-1]) {
			continue
		}
		if !isDigit(s[i]) || !isDigit(s[i+1]) || !isDigit(s[i+2]) || !isDigit(s[i+3]) {
			continue
		}
		if c := s[i+4]; c != '-' && c != '_' && c != '.' {
			continue
		}
		if !isDigit(s[i+5]) || !isDigit(s[i+6]) || (i+7 < len(s) && isDigit(s[i+7])) {
			continue
		}
		y, _ := strconv.Atoi(s[i : i+4])
		m := int(s[i+5]-'0')*10 + int(s[i+6]-'0')
		if yearOK(y) && m >= 1 && m <= 12 {
			return dateKey(y, m)
		}
	}
	return ""
}

// monthNameDate finds a month name token next to a year token ("January
// 2024", "jan_2024", "Jan2024", "2024 March"); a following year wins.
func monthNameDate(s string) string {
	toks := asciiTokens(s)
	year := func(k int) int {
		if k < 0 || k >= len(toks) || len(toks[k]) != 4 || !isDigit(toks[k][0]) {
			return 0
		}
		y, err := strconv.Atoi(toks[k])
		if err != nil || !yearOK(y) {
			return 0
		}
		return y
	}
	for k, t := range toks {
		m, ok := months[t]
		if !ok {
			continue
		}
		if y := year(k + 1); y != 0 {
			return dateKey(y, m)
		}
		if y := year(k - 1); y != 0 {
			return dateKey(y, m)
		}
	}
	return ""
}

// asciiTokens splits lower-cased s into runs of ASCII letters and runs of
// digits.
func asciiTokens(s string) []string {
	var toks []string
	start, kind := -1, 0
	flush := func(i int) {
		if start >= 0 {
			toks = append(toks, strings.ToLower(s[start:i]))
		}
		start, kind = -1, 0
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		k := 0
		switch {
		case isDigit(c):
			k = 1
		case ('a' <= c|0x20 && c|0x20 <= 'z'):
			k = 2
		}
		if k != kind {
			flush(i)
			if k != 0 {
				start, kind = i, k
			}
		}
	}
	flush(len(s))
	return toks
}

func isDateKey(k string) bool {
	return len(k) == 7 && k[4] == '-' && isDigit(k[0]) && isDigit(k[3]) && isDigit(k[5]) && isDigit(k[6])
}

// patternPrefix is the project prefix of a base name: the text before the
// first " - ", " – ", " — " or "(", trimmed, if it has at least 5
// characters of letters and digits and is not only generic words ("files",
// "New release").
func patternPrefix(base string) string {
	end := -1
	for _, sep := range []string{" - ", " – ", " — ", "("} {
		if i := strings.Index(base, sep); i > 0 && (end < 0 || i < end) {
			end = i
		}
	}
	if end < 0 {
		return ""
	}
	p := trimSeparators(base[:end])
	if n := normalize(p); utf8.RuneCountInString(n) < 5 || allGeneric(n) {
		return ""
	}
	return p
}

// stopWords are dropped from caption keys: fillers and file-type words.
var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "with": true, "from": true, "part": true, "parts": true,
	"file": true, "files": true, "this": true, "that": true, "are": true, "you": true, "your": true,
	"here": true, "link": true, "download": true, "via": true,
}

// CaptionKey normalises a caption for grouping: lower case, archive and
// document extensions and split suffixes dropped, every non-alphanumeric
// character a word break, words of at least 3 characters that are not stop
// words, distinct, sorted and joined by spaces. Fewer than 2 such words give
// "" (too little to group on), and so does a caption of generic words only
// ("New release!", "Enjoy the files"): channels put it on any post.
func CaptionKey(caption string) string {
	if caption == "" {
		return ""
	}
	words := strings.Fields(normalize(caption))
	keep := words[:0]
	for _, w := range words {
		if utf8.RuneCountInString(w) < 3 || stopWords[w] || isStrippableExt(w) {
			continue
		}
		keep = append(keep, w)
	}
	slices.Sort(keep)
	keep = slices.Compact(keep)
	if len(keep) < 2 {
		return ""
	}
	key := strings.Join(keep, " ")
	if allGeneric(key) {
		return ""
	}
	return key
}

// captionTitle is a caption fit to name a group: its first non-empty line,
// trimmed, at most 80 characters.
func captionTitle(caption string) string {
	for line := range strings.Lines(caption) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > 80 {
			line = strings.TrimSpace(string([]rune(line)[:80]))
		}
		return line
	}
	return ""
}

// captionSentence is a caption's title (captionTitle) cut at the end of its
// first sentence: "January 2024 release is here! 7 new models" → "January
// 2024 release is here".
func captionSentence(caption string) string {
	t := captionTitle(caption)
	for i, r := range t {
		if (r == '!' || r == '?' || r == '.') && i > 0 && (i+1 == len(t) || t[i+1] == ' ') {
			return strings.TrimSpace(t[:i])
		}
	}
	return t
}

// noise are path segments that say nothing about an archive's content.
var noise = []string{"__MACOSX", ".DS_Store", "Thumbs.db", "desktop.ini", ".git", "@eaDir",
	".Spotlight-V100", ".Trashes", "$RECYCLE.BIN"}

// genericFolders are root folders too common to mean "same project".
var genericFolders = map[string]bool{
	"stl": true, "stls": true, "files": true, "models": true, "model": true, "new folder": true,
	"supported": true, "unsupported": true, "presupported": true, "pre-supported": true,
	"images": true, "renders": true, "print": true, "prints": true, "export": true, "output": true,
}

// noiseStart marks the first bytes of noise segments (either case), so that
// most segments are told apart by one lookup.
var noiseStart = func() (t [256]bool) {
	t['.'] = true // "._" files
	for _, n := range noise {
		t[n[0]] = true
		t[lowerASCII(n[0])] = true
		t[strings.ToUpper(n[:1])[0]] = true
	}
	return t
}()

func isNoiseSegment(seg string) bool {
	if seg == "" || !noiseStart[seg[0]] {
		return false
	}
	if strings.HasPrefix(seg, "._") {
		return true
	}
	for _, n := range noise {
		if len(seg) == len(n) && strings.EqualFold(seg, n) {
			return true
		}
	}
	return false
}

func isNoisePath(p string) bool {
	for p != "" {
		seg := p
		if i := strings.IndexByte(p, '/'); i >= 0 {
			seg, p = p[:i], p[i+1:]
		} else {
			p = ""
		}
		if isNoiseSegment(seg) {
			return true
		}
	}
	return false
}

// RootFolder returns the dominant root folder of an archive's paths: the
// first path segment shared (case-insensitively) by more than half of the
// paths that are not noise (__MACOSX, .DS_Store, Thumbs.db, "._" files, ...).
// A file at the archive's root counts against every folder. It returns ""
// when no folder dominates, when the folder has fewer than 3 characters or
// is a generic name such as "STL", "files" or "Supported STL" (generic
// words only). The casing is the first path's.
func RootFolder(paths []string) string {
	name, _ := rootFolder(paths)
	return name
}

// rootFolder is RootFolder and its lower-cased form, the AUTO_ZIP key: the
// generic-name check needs it, so the key costs no second copy.
func rootFolder(paths []string) (name, lower string) {
	type count struct {
		name string
		n    int
	}
	var buf [8]count
	counts := buf[:0]
	total := 0
	for _, p := range paths {
		if strings.IndexByte(p, '\\') >= 0 {
			p = strings.ReplaceAll(p, "\\", "/")
		}
		for {
			q := strings.TrimPrefix(strings.TrimLeft(p, "/"), "./")
			if q == p {
				break
			}
			p = q
		}
		if p == "" || isNoisePath(p) {
			continue
		}
		total++
		slash := strings.IndexByte(p, '/')
		if slash <= 0 {
			continue
		}
		seg := strings.TrimSpace(p[:slash])
		found := false
		for k := range counts {
			if strings.EqualFold(counts[k].name, seg) {
				counts[k].n++
				found = true
				break
			}
		}
		if !found {
			counts = append(counts, count{name: seg, n: 1})
		}
	}
	for _, c := range counts {
		if 2*c.n > total {
			lower := strings.ToLower(c.name)
			if utf8.RuneCountInString(c.name) < 3 || genericFolders[lower] || lower == "." || lower == ".." ||
				allGeneric(lower) {
				return "", ""
			}
			return c.name, lower
		}
	}
	return "", ""
}
