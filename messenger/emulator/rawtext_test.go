package emulator

import "testing"

// TestSeedRawText: the *_bytes keys carry bytes JSON strings cannot
// (invalid UTF-8), and win over the string keys.
func TestSeedRawText(t *testing.T) {
	seed := `{"account": {"phone": "+15550000001"}, "channels": [{"title_bytes": "/w==", "forum": true,
		"topics": [{"title": "", "title_bytes": "AHg=", "posts": [{"text": "hi"}]}],
		"posts": [{"generate": {"name": "g.zip", "size": 10, "seed": 1}, "name": "plain", "name_bytes": "ZXZpbP8uemlw",
		"caption": "c", "caption_bytes": "Y2FwAA=="}]}]}`
	s, err := ParseSeed([]byte(seed), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	type texts struct{ Title, Topic, Name, Caption string }
	ch := s.Channels[0]
	got := texts{ch.PlatformTitle(), ch.Topics[0].title(), ch.Posts[0].name(), ch.Posts[0].caption()}
	want := texts{"\xff", "\x00x", "evil\xff.zip", "cap\x00"}
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
