package archive

import (
	"regexp"
	"strings"
	"unicode"
)

var (
	months = `(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)`
	// "<creator> - 2024-01", "- 2024_01", "- 2024.01", "- 01-2024", "- January 2024",
	// "- 2024 January", each optionally followed by more words.
	reCreatorDate = regexp.MustCompile(`(?i)^(.+?)(?:\s+[-–—]\s*|\s*[-–—]\s+)(?:(?:19|20)\d{2}\s*[-_. ]\s*(?:0?[1-9]|1[0-2])|(?:0?[1-9]|1[0-2])\s*[-_.]\s*(?:19|20)\d{2}|` +
		months + `\.?[\s_-]*(?:19|20)\d{2}|(?:19|20)\d{2}[\s_-]*` + months + `)(?:$|[\s_\-.\])])`)
	// "[Creator] …" markers and "(…)" segments in channel titles.
	reBracketed = regexp.MustCompile(`\[[^\]]*\]|\([^)]*\)|【[^】]*】`)
	reSpaces    = regexp.MustCompile(`\s+`)
)

// genericTitles are channel titles (after cleaning, lower-cased) that name a
// kind of content, not a creator.
var genericTitles = map[string]bool{
	"3d printing": true, "stl": true, "stls": true, "free stl": true, "free stls": true, "stl zone": true,
	"stl forest": true, "stl all": true, "marvel stl": true, "dc stl": true, "star wars stl": true,
	"pokemon stl": true, "stl files": true, "3d models": true, "3d prints": true, "3d print": true,
	"stl archive": true, "stl collection": true, "3d printing files": true, "free 3d models": true,
}

// genericWords are words that alone never make a creator's name.
var genericWords = map[string]bool{
	"stl": true, "stls": true, "3d": true, "printing": true, "print": true, "prints": true, "printer": true,
	"files": true, "file": true, "free": true, "models": true, "model": true, "archive": true,
	"collection": true, "zone": true, "all": true, "the": true, "and": true, "&": true, "of": true,
	"for": true, "resin": true, "fdm": true, "minis": true, "miniatures": true, "club": true,
	"channel": true, "group": true, "chat": true, "paid": true, "completed": true, "complete": true,
}

// Creator derives a package's creator (SPEC rules 2 and 3): the forum topic
// name when the file comes from a topic other than General; else the creator
// in the file name ("<creator> - <YYYY-MM>.<ext>" and close variants such as
// "<creator> - 2024_01" or "<creator> - January 2024", after removing part
// suffixes); else the channel title without markers ("[Completed]",
// "(Paid)"), emoji and a " - subtitle", unless that title is generic ("STL",
// "3D printing", …); else "".
func Creator(topicName string, isGeneralTopic bool, fileName string, channelTitle string) string {
	if t := cleanSpaces(topicName); t != "" && !isGeneralTopic && !strings.EqualFold(t, "general") {
		return t
	}
	if c := CreatorFromFileName(fileName); c != "" {
		return c
	}
	return CreatorFromTitle(channelTitle)
}

// CreatorFromFileName returns the creator named in a file name following the
// "<creator> - <date>" convention, or "".
func CreatorFromFileName(fileName string) string {
	name := stripPartAndExt(fileName)
	name = strings.ReplaceAll(name, "_-_", " - ")
	m := reCreatorDate.FindStringSubmatch(name)
	if m == nil {
		return ""
	}
	c := strings.Trim(cleanSpaces(strings.ReplaceAll(m[1], "_", " ")), " -–—.,")
	if len([]rune(c)) < 2 || !hasLetter(c) {
		return ""
	}
	return c
}

// CreatorFromTitle derives a creator from a channel title, or "" when the
// title is generic.
func CreatorFromTitle(title string) string {
	t := reBracketed.ReplaceAllString(title, " ")
	t = strings.Map(func(r rune) rune {
		if isEmoji(r) {
			return ' '
		}
		return r
	}, t)
	t = cleanSpaces(t)
	for _, sep := range []string{" - ", " – ", " — ", " | ", " • "} {
		if i := strings.Index(t, sep); i > 0 {
			t = t[:i]
		}
	}
	t = strings.Trim(cleanSpaces(t), " -–—|•:.,!")
	if len([]rune(t)) < 2 || !hasLetter(t) {
		return ""
	}
	lower := strings.ToLower(t)
	if genericTitles[lower] {
		return ""
	}
	generic := true
	for _, w := range strings.Fields(lower) {
		if !genericWords[w] {
			generic = false
			break
		}
	}
	if generic {
		return ""
	}
	return t
}

// stripPartAndExt removes part suffixes (.part1.rar, .z01, .r00, .001) and
// the archive or document extension from a file name.
func stripPartAndExt(name string) string {
	info, ok := ParseName(name)
	if !ok {
		return strings.TrimSpace(name)
	}
	return info.Base
}

func cleanSpaces(s string) string { return strings.TrimSpace(reSpaces.ReplaceAllString(s, " ")) }

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// isEmoji reports pictographs, dingbats, flags, keycaps and their joiners
// and variation selectors.
func isEmoji(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF, r >= 0x2600 && r <= 0x27BF, r >= 0x2B00 && r <= 0x2BFF,
		r >= 0x2190 && r <= 0x21FF, r >= 0x2300 && r <= 0x23FF, r >= 0xE0020 && r <= 0xE007F:
		return true
	case r == 0x200D, r == 0x20E3, r >= 0xFE00 && r <= 0xFE0F, r == 0x3030, r == 0x303D, r == 0x3297, r == 0x3299:
		return true
	}
	return unicode.Is(unicode.So, r) && r > 0x2000
}
