package emulator

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFiles(t *testing.T) string {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.zip", "cover.jpg"} {
		if err := os.WriteFile(filepath.Join(dir, "files", n), []byte("data"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestParseSeed(t *testing.T) {
	dir := writeFiles(t)
	const base = `{"account": {"phone": "+15550000001"}, "bot": {"username": "hoard_bot", "token": "111:demo"},
		"destination": {"title": "Hoard Archive"}, "channels": [%s], "faults": [%s], "users": [%s]}`
	tests := []struct {
		name, channels, faults, users, wantErr string
	}{
		{name: "ok", channels: `{"title": "A", "username": "chan_a", "joined": true, "category": "STL", "posts": [
			{"file": "files/a.zip", "caption": "x", "album": 7, "date": "2024-01-05T10:00:00Z"},
			{"photo": "files/cover.jpg", "album": 7},
			{"file": "files/a.zip", "same_document_as": 0},
			{"generate": {"name": "Huge.zip.001", "size": 3000000000, "seed": 42}},
			{"text": "hello", "reply_to": 0}]},
			{"title": "F", "forum": true, "topics": [{"title": "T", "posts": [{"file": "files/a.zip"}]}]}`,
			faults: `{"method": "upload.getFile", "stall_ms": 10, "times": 1}, {"method": "messages.getHistory", "channel": "chan_a", "error": "CHANNEL_PRIVATE", "after": 1}`},
		{name: "unknown key", channels: `{"title": "A", "colour": "red"}`, wantErr: `"colour"`},
		{name: "unknown post key", channels: `{"title": "A", "posts": [{"text": "x", "sticker": 1}]}`, wantErr: `"sticker"`},
		{name: "missing file", channels: `{"title": "A", "posts": [{"file": "files/none.zip"}]}`, wantErr: "none.zip"},
		{name: "two kinds", channels: `{"title": "A", "posts": [{"file": "files/a.zip", "photo": "files/cover.jpg"}]}`, wantErr: "exactly one"},
		{name: "empty post", channels: `{"title": "A", "posts": [{}]}`, wantErr: "exactly one"},
		{name: "forward reply", channels: `{"title": "A", "posts": [{"text": "x", "reply_to": 0}]}`, wantErr: "reply_to"},
		{name: "same doc of text", channels: `{"title": "A", "posts": [{"text": "x"}, {"same_document_as": 0}]}`, wantErr: "no document"},
		{name: "topics need forum", channels: `{"title": "A", "topics": [{"title": "T", "posts": []}]}`, wantErr: "forum"},
		{name: "bad date", channels: `{"title": "A", "posts": [{"text": "x", "date": "yesterday"}]}`, wantErr: "date"},
		{name: "duplicate username", channels: `{"title": "A", "username": "hoard_bot"}`, wantErr: "twice"},
		{name: "no title", channels: `{"username": "abcd"}`, wantErr: "title"},
		{name: "bad generate", channels: `{"title": "A", "posts": [{"generate": {"name": "x", "size": 0}}]}`, wantErr: "generate"},
		{name: "unknown method", faults: `{"method": "upload.getFiles", "error": "X"}`, wantErr: "unknown method"},
		{name: "fault without action", faults: `{"method": "upload.getFile"}`, wantErr: "one of error"},
		{name: "fault unknown channel", faults: `{"method": "upload.getFile", "channel": "zzzz", "error": "X"}`, wantErr: "zzzz"},
		{name: "users and a dropped answer", users: `{"phone": "+1 555 000-0101", "username": "alice", "first_name": "Alice"}, {"phone": "+15550000102"}`,
			faults: `{"method": "messages.forwardMessages", "drop_answer": true, "times": 1}`},
		{name: "user without phone", users: `{"username": "alice"}`, wantErr: "users[0].phone"},
		{name: "user phone not a number", users: `{"phone": "+1555abc"}`, wantErr: "not a phone number"},
		{name: "user phone of the account", users: `{"phone": "+15550000001"}`, wantErr: "used twice"},
		{name: "user named like the bot", users: `{"phone": "+15550000101", "username": "hoard_bot"}`, wantErr: "twice"},
		{name: "unknown user key", users: `{"phone": "+15550000101", "password": "x"}`, wantErr: `"password"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(fmt.Sprintf(base, tt.channels, tt.faults, tt.users))
			s, err := ParseSeed(data, dir)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(s.Channels) > 0 && !filepath.IsAbs(s.Channels[0].Posts[0].File) {
					t.Fatal("file path not resolved")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to mention %s", err, tt.wantErr)
			}
		})
	}
	if _, err := ParseSeed([]byte(`{"account": {"phone": "1"}} {}`), dir); err == nil {
		t.Fatal("trailing data accepted")
	}
	if _, err := ParseSeed([]byte(`{"account": {}}`), dir); err == nil {
		t.Fatal("missing phone accepted")
	}
}

func TestGenerateBytes(t *testing.T) {
	whole := make([]byte, 4096)
	GenerateBytes(42, 0, whole)
	for _, off := range []int64{0, 1, 7, 8, 1000, 4000} {
		part := make([]byte, 96)
		if int(off)+len(part) > len(whole) {
			part = part[:len(whole)-int(off)]
		}
		GenerateBytes(42, off, part)
		if !bytes.Equal(part, whole[off:int(off)+len(part)]) {
			t.Fatalf("range at %d differs", off)
		}
	}
	other := make([]byte, 64)
	GenerateBytes(43, 0, other)
	if bytes.Equal(other, whole[:64]) {
		t.Fatal("seeds 42 and 43 produce the same bytes")
	}
}

func TestPage(t *testing.T) {
	var msgs []*message
	for i := 1; i <= 10; i++ {
		msgs = append(msgs, &message{id: i})
	}
	ids := func(ms []*message) []int {
		var out []int
		for _, m := range ms {
			out = append(out, m.id)
		}
		return out
	}
	tests := []struct {
		offsetID, addOffset, limit, maxID, minID int
		want                                     []int
	}{
		{limit: 3, want: []int{10, 9, 8}},
		{offsetID: 8, limit: 3, want: []int{7, 6, 5}},
		{offsetID: 3, limit: 5, want: []int{2, 1}},
		{offsetID: 5, addOffset: -2, limit: 4, want: []int{6, 5, 4, 3}},
		{limit: 100, minID: 7, want: []int{10, 9, 8}},
		{limit: 2, maxID: 5, want: []int{4, 3}},
		{offsetID: 1, limit: 5, want: nil},
	}
	for _, tt := range tests {
		got := ids(page(msgs, tt.offsetID, tt.addOffset, tt.limit, tt.maxID, tt.minID))
		if len(got) != len(tt.want) {
			t.Fatalf("%+v: got %v", tt, got)
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Fatalf("%+v: got %v", tt, got)
			}
		}
	}
}

func TestNewBuildsWorld(t *testing.T) {
	dir := writeFiles(t)
	s, err := ParseSeed([]byte(`{"account": {"phone": "+1 555 0000001", "premium": true}, "bot": {"username": "hoard_bot", "token": "111:demo"},
		"channels": [{"title": "A", "username": "chan_a", "invite": "Inv1", "joined": true, "posts": [{"file": "files/a.zip"}, {"file": "files/a.zip"}, {"file": "files/a.zip", "same_document_as": 0}]}],
		"faults": [{"method": "messages.getHistory", "channel": "chan_a", "error": "CHANNEL_PRIVATE"}]}`), dir)
	if err != nil {
		t.Fatal(err)
	}
	key, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	build := func() *Emulator {
		e, err := New(Options{Seed: s, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	e1, e2 := build(), build()
	if e1.AccountID() != e2.AccountID() || e1.DestinationID() != e2.DestinationID() || e1.ChannelID("A") != e2.ChannelID("A") {
		t.Fatal("ids are not deterministic")
	}
	if e1.BotID() != 111 {
		t.Fatalf("bot id = %d, want the token's 111", e1.BotID())
	}
	c := e1.channels[e1.ChannelID("A")]
	if len(c.msgs) != 4 || c.msgs[1].doc == c.msgs[2].doc || c.msgs[1].doc != c.msgs[3].doc {
		t.Fatal("two uploads of one path must be two documents; same_document_as must share")
	}
	if e1.faults[0].ChannelID != c.id {
		t.Fatal("fault channel not resolved")
	}
	if e1.accessHash(1, c.id) == e1.accessHash(2, c.id) {
		t.Fatal("access hashes must differ per viewer")
	}
	if !e1.account.premium || e1.account.phone != "15550000001" {
		t.Fatalf("account = %+v", e1.account)
	}
}
