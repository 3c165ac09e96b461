package bot

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hoard/hoard/messenger"
)

func TestParseCommand(t *testing.T) {
	type want struct {
		cmd command
		ok  bool
	}
	for _, tc := range []struct {
		text string
		want want
	}{
		{"/search dragon bust", want{command{"search", "dragon bust"}, true}},
		{"  /SEARCH   dragon  ", want{command{"search", "dragon"}, true}},
		{"/search@hoard_bot dragon", want{command{"search", "dragon"}, true}},
		{"/search@HOARD_BOT", want{command{"search", ""}, true}},
		{"/search@other_bot dragon", want{}},
		{"/start link_ABCD2345", want{command{"start", "link_ABCD2345"}, true}},
		{"/search\ndragon", want{command{"search", "dragon"}, true}},
		{"/latest\t5", want{command{"latest", "5"}, true}},
		{"search dragon", want{}},
		{"/", want{}},
		{"/ search", want{}},
		{"/sé", want{}},
		{"/" + strings.Repeat("a", maxCommandName+1), want{}},
		{"/a-b", want{}},
		{"", want{}},
	} {
		cmd, ok := parseCommand(tc.text, "hoard_bot")
		if got := (want{cmd, ok}); got != tc.want {
			t.Errorf("parseCommand(%q) = %+v, want %+v", tc.text, got, tc.want)
		}
	}
}

func TestParseCallback(t *testing.T) {
	token := newToken()
	if !validToken(token) {
		t.Fatalf("newToken() = %q is not a valid token", token)
	}
	for _, tc := range []struct {
		data    []byte
		want    callback
		wantErr bool
	}{
		{pageData(token, 0), callback{kind: dataPage, token: token}, false},
		{pageData(token, 7), callback{kind: dataPage, token: token, page: 7}, false},
		{idData(dataSend, 42), callback{kind: dataSend, id: 42}, false},
		{idData(dataSendGroup, 9), callback{kind: dataSendGroup, id: 9}, false},
		{pageData(token, maxPage+1), callback{}, true},
		{pageData(token, -1), callback{}, true},
		{pageData("short", 1), callback{}, true},
		{pageData(token[:11]+"!", 1), callback{}, true},
		{[]byte("snd:0"), callback{}, true},
		{[]byte("snd:#5"), callback{}, true},
		{[]byte("snd:x"), callback{}, true},
		{[]byte("what:1"), callback{}, true},
		{nil, callback{}, true},
		{bytes.Repeat([]byte("a"), messenger.MaxButtonData+1), callback{}, true},
	} {
		got, err := parseCallback(tc.data)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("parseCallback(%q) = %+v, %v; want %+v (error %v)", tc.data, got, err, tc.want, tc.wantErr)
		}
	}
	if n := len(pageData(token, maxPage)); n > messenger.MaxButtonData {
		t.Errorf("the longest page button carries %d bytes, above the platform's %d", n, messenger.MaxButtonData)
	}
}

// FuzzParseCommand checks that any text parses without panicking into a
// command whose name is a clean, lower-case identifier.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"/search dragon", "/start link_ABC", "/a@b c", "/\n", "/x\u00a0y", "/ÄÖ"} {
		f.Add(s, "hoard_bot")
	}
	f.Fuzz(func(t *testing.T, text, botName string) {
		cmd, ok := parseCommand(text, botName)
		if !ok {
			return
		}
		for broken, bad := range map[string]bool{
			"empty":                   cmd.name == "",
			"too long":                len(cmd.name) > maxCommandName,
			"not lower case":          cmd.name != strings.ToLower(cmd.name),
			"holding '@', '/' or ' '": strings.ContainsAny(cmd.name, "@/ "),
			"invalid UTF-8":           !utf8.ValidString(cmd.name),
		} {
			if bad {
				t.Fatalf("parseCommand(%q) gave a name %s: %q", text, broken, cmd.name)
			}
		}
		if cmd.args != strings.TrimSpace(cmd.args) {
			t.Fatalf("parseCommand(%q) gave untrimmed args %q", text, cmd.args)
		}
	})
}

// FuzzParseCallback checks that any button data parses without panicking,
// and that what parses is what the bot would have made.
func FuzzParseCallback(f *testing.F) {
	for _, d := range [][]byte{pageData("abcdefghijkl", 3), idData(dataSend, 5), idData(dataSendGroup, 1), []byte("pg::"), []byte("snd:")} {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cb, err := parseCallback(data)
		if err != nil {
			return
		}
		var again callback
		switch cb.kind {
		case dataPage:
			again, err = parseCallback(pageData(cb.token, cb.page))
		case dataSend, dataSendGroup:
			if cb.id <= 0 {
				t.Fatalf("parseCallback(%q) gave id %d", data, cb.id)
			}
			again, err = parseCallback(idData(cb.kind, cb.id))
		default:
			t.Fatalf("parseCallback(%q) gave kind %q", data, cb.kind)
		}
		if err != nil || again != cb {
			t.Fatalf("%+v does not survive a round trip: %+v, %v", cb, again, err)
		}
	})
}
