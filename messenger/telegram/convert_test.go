package telegram

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gotd/td/tg"
)

// TestConvertMakesPlatformTextStorable feeds hostile strings through the
// conversions at the platform boundary: NUL and invalid UTF-8 are
// replaced, lengths bounded, direction overrides kept.
func TestConvertMakesPlatformTextStorable(t *testing.T) {
	type texts struct {
		Title, Topic, FileName, Caption string
		NameLen, CaptionLen             int
	}
	doc := func(name string) *tg.MessageMediaDocument {
		return &tg.MessageMediaDocument{Document: &tg.Document{ID: 1, Size: 10,
			Attributes: []tg.DocumentAttributeClass{&tg.DocumentAttributeFilename{FileName: name}}}}
	}
	tests := []struct {
		name                            string
		title, topic, fileName, caption string
		want                            texts
	}{
		{"ordinary", "Mammoth Factory", "Dragons", "Pack.zip", "January",
			texts{"Mammoth Factory", "Dragons", "Pack.zip", "January", 8, 7}},
		{"NUL", "Evil\x00Channel", "To\x00pic", "evil\x00nul.stl", "cap\x00tion",
			texts{"Evil\uFFFDChannel", "To\uFFFDpic", "evil\uFFFDnul.stl", "cap\uFFFDtion", 12, 8}},
		{"invalid UTF-8", "T\xff", "\xfe", "caf\xe9.zip", "\xc3",
			texts{"T\uFFFD", "\uFFFD", "caf\uFFFD.zip", "\uFFFD", 8, 1}},
		{"direction override kept", "a\u202Eb", "c\u2066d", "x\u202Egpj.exe", "\u202Bcap",
			texts{"a\u202Eb", "c\u2066d", "x\u202Egpj.exe", "\u202Bcap", 9, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := convertChannel(&tg.Channel{ID: 5, Title: tt.title})
			m, ok := convertMessage(&tg.Message{ID: 9, Message: tt.caption, Media: doc(tt.fileName)}, false, false)
			if !ok || m.Document == nil {
				t.Fatalf("convertMessage: %+v, %v", m, ok)
			}
			got := texts{Title: ch.Title, Topic: platformTitle(tt.topic), FileName: m.Document.FileName, Caption: m.Text,
				NameLen: utf8.RuneCountInString(m.Document.FileName), CaptionLen: utf8.RuneCountInString(m.Text)}
			if got != tt.want {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

// TestConvertBoundsLengths checks the length bounds of the schema: a 3,000
// character file name keeps its extension within 1,024 characters, titles
// and captions are cut on a character boundary.
func TestConvertBoundsLengths(t *testing.T) {
	type lengths struct {
		Name, Title, Caption int
		NameExt              string
	}
	m, _ := convertMessage(&tg.Message{ID: 1, Message: strings.Repeat("é", 20000),
		Media: &tg.MessageMediaDocument{Document: &tg.Document{ID: 2, Attributes: []tg.DocumentAttributeClass{
			&tg.DocumentAttributeFilename{FileName: strings.Repeat("n", 2996) + ".zip"}}}}}, false, false)
	ch := convertChannel(&tg.Channel{ID: 3, Title: strings.Repeat("🐉", 1000)})
	got := lengths{Name: utf8.RuneCountInString(m.Document.FileName), Title: utf8.RuneCountInString(ch.Title),
		Caption: utf8.RuneCountInString(m.Text), NameExt: m.Document.FileName[len(m.Document.FileName)-4:]}
	want := lengths{Name: 1024, Title: 256, Caption: 8192, NameExt: ".zip"}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
