package web

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/hoard/hoard"
)

func TestMessengerLinkCard(t *testing.T) {
	e := newEnv(t, func(d *Deps) { d.BotUsername = "hoard_bot" })
	ctx := context.Background()
	u, _ := e.user(hoard.RoleUser)
	c := e.session(u)
	resp, body := e.do(nil, "POST", "/settings/messenger/link-code", url.Values{}, c)
	m := regexp.MustCompile(`<p class="code">([A-Z2-9]{8})</p>`).FindStringSubmatch(body)
	if resp.StatusCode != 200 || m == nil || !strings.Contains(body, "https://t.me/hoard_bot?start=link_"+m[1]) {
		t.Fatalf("link code page: %d\n%s", resp.StatusCode, body)
	}
	// The bot side: the code links the account once.
	var link *hoard.MessengerLink
	e.authChange(func() (err error) {
		link, err = e.db.ConsumeLinkCode(ctx, hoard.LinkCodeHash(strings.ToLower(m[1])), 4242, 1, "tg_user")
		return err
	})
	if link.UserID != u.ID {
		t.Fatalf("consume = %+v", link)
	}
	if _, body = e.do(nil, "GET", "/settings", nil, c); !strings.Contains(body, "Linked to @tg_user") {
		t.Fatal("settings do not show the link")
	}
	resp, _ = e.do(nil, "POST", "/settings/messenger/unlink", url.Values{}, c)
	if _, err := e.db.FindMessengerLink(ctx, u.ID); resp.StatusCode != 303 || hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Fatalf("unlink: %d, %v", resp.StatusCode, err)
	}
}

func TestNewLinkCode(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		c, err := NewLinkCode()
		if err != nil || len(c) != linkCodeLen || strings.Trim(c, linkCodeAlphabet) != "" {
			t.Fatalf("code %q, %v", c, err)
		}
		seen[c] = true
	}
	if len(seen) < 195 {
		t.Fatalf("only %d distinct codes of 200", len(seen))
	}
	if hoard.LinkCodeHash(" abcd2345 ") != hoard.LinkCodeHash("ABCD2345") {
		t.Fatal("hash depends on case or spaces")
	}
}
