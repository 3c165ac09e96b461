package hoard

import "testing"

func TestPostURL(t *testing.T) {
	public := &Channel{PlatformID: 1234567890, Username: "dragonforge"}
	private := &Channel{PlatformID: 1234567890}
	tests := []struct {
		name       string
		c          *Channel
		msg, topic int64
		want       string
	}{
		{"public", public, 42, 0, "https://t.me/dragonforge/42"},
		{"public forum topic", public, 42, 7, "https://t.me/dragonforge/7/42"},
		{"private", private, 42, 0, "https://t.me/c/1234567890/42"},
		{"private forum topic", private, 42, 7, "https://t.me/c/1234567890/7/42"},
		{"no message", public, 0, 0, ""},
		{"no channel", nil, 42, 0, ""},
		{"a channel with neither name nor id", &Channel{}, 42, 0, ""},
	}
	for _, tt := range tests {
		if got := PostURL(tt.c, tt.msg, tt.topic); got != tt.want {
			t.Errorf("%s: PostURL = %q, want %q", tt.name, got, tt.want)
		}
	}
}
