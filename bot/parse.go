package bot

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/hoard/hoard/messenger"
)

// command is a parsed command message.
type command struct {
	name string // lower-cased, without the slash and the bot's name
	args string // the rest, trimmed
}

// maxCommandName bounds a command's name (the platform allows 32).
const maxCommandName = 32

// parseCommand reads "/name args" or "/name@botname args". It reports
// false when text is not a command: no leading slash, a name that is empty,
// too long or not made of letters, digits and underscores, or a command
// addressed to another bot.
func parseCommand(text, botUsername string) (command, bool) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") {
		return command{}, false
	}
	head, args, _ := strings.Cut(text[1:], " ")
	if i := strings.IndexFunc(head, unicode.IsSpace); i >= 0 { // a newline or tab after the name
		head, args = head[:i], head[i:]+" "+args
	}
	name, to, addressed := strings.Cut(head, "@")
	if addressed && !strings.EqualFold(to, botUsername) {
		return command{}, false
	}
	if name == "" || len(name) > maxCommandName || strings.IndexFunc(name, func(r rune) bool {
		return r > unicode.MaxASCII || !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
	}) >= 0 {
		return command{}, false
	}
	return command{name: strings.ToLower(name), args: strings.TrimSpace(args)}, true
}

// parseID reads a positive decimal id, with an optional leading '#'.
func parseID(s string) (int64, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "#")
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

// Kinds of button data. A button carries at most messenger.MaxButtonData
// bytes: "<kind>:<value>", with search state on the server (a token).
const (
	dataPage      = "pg"  // pg:<token>:<page>
	dataSend      = "snd" // snd:<package id>
	dataSendGroup = "sgr" // sgr:<group id>
)

// callback is parsed button data.
type callback struct {
	kind  string
	token string // dataPage
	page  int    // dataPage
	id    int64  // dataSend, dataSendGroup
}

// maxPage bounds the page a button may ask for.
const maxPage = 10000

// pageData is the button data of a search page.
func pageData(token string, page int) []byte {
	return []byte(fmt.Sprintf("%s:%s:%d", dataPage, token, page))
}

// idData is the button data of a send button.
func idData(kind string, id int64) []byte { return []byte(fmt.Sprintf("%s:%d", kind, id)) }

// parseCallback reads button data made by pageData or idData; anything
// else (another version's buttons, forged data) is an error.
func parseCallback(data []byte) (callback, error) {
	if len(data) == 0 || len(data) > messenger.MaxButtonData {
		return callback{}, fmt.Errorf("button data of %d bytes", len(data))
	}
	kind, rest, _ := strings.Cut(string(data), ":")
	switch kind {
	case dataPage:
		token, p, _ := strings.Cut(rest, ":")
		page, err := strconv.Atoi(p)
		if !validToken(token) || err != nil || page < 0 || page > maxPage {
			return callback{}, fmt.Errorf("bad page button %q", data)
		}
		return callback{kind: kind, token: token, page: page}, nil
	case dataSend, dataSendGroup:
		id, ok := parseID(rest)
		if !ok || strings.HasPrefix(rest, "#") {
			return callback{}, fmt.Errorf("bad send button %q", data)
		}
		return callback{kind: kind, id: id}, nil
	}
	return callback{}, fmt.Errorf("unknown button %q", data)
}

// tokenLen is the length of a search token: 12 base64url characters (72
// random bits).
const tokenLen = 12

func validToken(t string) bool {
	if len(t) != tokenLen {
		return false
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// linkPayload is the deep-link start parameter that links in one step:
// "link_<CODE>".
const linkPayload = "link_"
