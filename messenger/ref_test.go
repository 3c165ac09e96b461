package messenger

import (
	"testing"

	"github.com/hoard/hoard"
)

func TestParseChannelRef(t *testing.T) {
	tests := []struct {
		in   string
		want ChannelRef
		bad  bool
	}{
		{in: "https://t.me/mammothfactory", want: ChannelRef{Username: "mammothfactory"}},
		{in: "http://t.me/MammothFactory/", want: ChannelRef{Username: "mammothfactory"}},
		{in: "t.me/mammothfactory", want: ChannelRef{Username: "mammothfactory"}},
		{in: "  https://telegram.me/mammothfactory?start=1 ", want: ChannelRef{Username: "mammothfactory"}},
		{in: "https://t.me/mammothfactory/123", want: ChannelRef{Username: "mammothfactory"}},
		{in: "https://t.me/s/mammothfactory", want: ChannelRef{Username: "mammothfactory"}},
		{in: "@mammothfactory", want: ChannelRef{Username: "mammothfactory"}},
		{in: "mammothfactory", want: ChannelRef{Username: "mammothfactory"}},
		{in: "stl_emporium", want: ChannelRef{Username: "stl_emporium"}},
		{in: "https://t.me/+AbCd123", want: ChannelRef{InviteHash: "AbCd123"}},
		{in: "t.me/+AbCd_12-3", want: ChannelRef{InviteHash: "AbCd_12-3"}},
		{in: "https://t.me/joinchat/AbCd123", want: ChannelRef{InviteHash: "AbCd123"}},
		{in: "https://t.me/joinchat/AbCd123/", want: ChannelRef{InviteHash: "AbCd123"}},
		{in: "tg://resolve?domain=mammothfactory", want: ChannelRef{Username: "mammothfactory"}},
		{in: "tg://join?invite=AbCd123", want: ChannelRef{InviteHash: "AbCd123"}},
		{in: "", bad: true},
		{in: "@", bad: true},
		{in: "abc", bad: true},
		{in: "1abcde", bad: true},
		{in: "abcde_", bad: true},
		{in: "ab__cde", bad: true},
		{in: "name with space", bad: true},
		{in: "https://example.com/mammothfactory", bad: true},
		{in: "https://t.me/", bad: true},
		{in: "https://t.me/+", bad: true},
		{in: "https://t.me/joinchat", bad: true},
		{in: "https://t.me/+Ab/cd", bad: true},
		{in: "https://t.me/+Ab$cd", bad: true},
		{in: "https://t.me/c/12345/6", bad: true},
		{in: "https://t.me/name/x/y", bad: true},
		{in: "https://t.me/mammothfactory/abc", bad: true},
		{in: "tg://settings", bad: true},
		{in: "a/b", bad: true},
		{in: "toolongusername_toolongusername_x", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseChannelRef(tt.in)
			if tt.bad {
				if err == nil {
					t.Fatalf("ParseChannelRef(%q) = %+v, want error", tt.in, got)
				}
				if code := hoard.ErrorCode(err); code != hoard.EINVALID {
					t.Fatalf("error code = %q, want %q", code, hoard.EINVALID)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseChannelRef(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("ParseChannelRef(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			// The canonical form parses back to the same reference.
			again, err := ParseChannelRef(got.String())
			if err != nil || again != got {
				t.Fatalf("round trip of %q: %+v, %v", got.String(), again, err)
			}
		})
	}
}

func FuzzParseChannelRef(f *testing.F) {
	for _, s := range []string{"https://t.me/mammothfactory", "@name_x", "t.me/+AbCd123",
		"https://t.me/joinchat/AbCd", "tg://resolve?domain=abcd", "t.me/s/abcd/12", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ref, err := ParseChannelRef(s)
		if err != nil {
			if hoard.ErrorCode(err) != hoard.EINVALID {
				t.Fatalf("error code %q", hoard.ErrorCode(err))
			}
			return
		}
		if (ref.Username == "") == (ref.InviteHash == "") {
			t.Fatalf("exactly one field must be set: %+v", ref)
		}
		again, err := ParseChannelRef(ref.String())
		if err != nil || again != ref {
			t.Fatalf("round trip %q: %+v, %v", ref.String(), again, err)
		}
	})
}

func TestEscapeHTML(t *testing.T) {
	if got := EscapeHTML(`<b>Tom & "Jerry"</b>`); got != "&lt;b&gt;Tom &amp; &quot;Jerry&quot;&lt;/b&gt;" {
		t.Fatalf("EscapeHTML = %q", got)
	}
}
