package web

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	bt "github.com/hoard/hoard/web/browsertest"
)

// TestBrowserProviderSignIn is the whole redirect dance in headless
// Chromium against the in-process OpenID provider, which is another site
// (localhost, hoard on 127.0.0.1): register from an invite link through
// the provider, see the link in Settings, sign out, sign in again through
// the provider and come back to the page asked for. It fails on anything
// the pages report, a form-action policy that blocks the way to the
// provider included.
func TestBrowserProviderSignIn(t *testing.T) {
	e, o := newOIDCEnv(t)
	o.addUser(testOPUser{ID: "wanderer", Email: "wanderer@example.com", EmailVerified: true})
	ctx := bt.New(t)
	errs := bt.CollectErrors(t, ctx)
	defer errs.Check(t, "the dance's pages")
	base := e.ts.URL
	atProvider := func() {
		t.Helper()
		bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#op-submit`)))
		if loc := bt.Run(t, ctx, chromedp.Location()); !strings.HasPrefix(loc, o.issuer+"/login/username") {
			t.Fatalf("expected the provider's login page, at %s", loc)
		}
		bt.Do(t, ctx, chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "wanderer"),
			chromedp.SendKeys(chromedp.CSS(`input[name=password]`), testOPPassword))
	}

	bt.Follow(t, ctx, chromedp.Navigate(base+"/register?code="+e.invite(1, time.Hour)))
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`button[data-provider=oidc]`)))
	atProvider()
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`#op-submit`)))
	bt.Do(t, ctx, chromedp.WaitVisible(chromedp.CSS(`input[name=q]`)))
	if loc := bt.Run(t, ctx, chromedp.Location()); loc != base+"/" {
		t.Fatalf("after registering through the provider: at %s", loc)
	}

	bt.Follow(t, ctx, chromedp.Navigate(base+"/settings"))
	if got := bt.Text(t, ctx, `[data-method=oidc]`); !strings.Contains(got, "Test IdP: linked (wanderer@example.com)") ||
		!strings.Contains(got, "only way to sign in") {
		t.Fatalf("Settings' sign-in section: %q", got)
	}

	// Signed out, a page asked for leads to the sign-in page and, through
	// the provider, back to it.
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)))
	bt.Follow(t, ctx, chromedp.Navigate(base+"/crowdfunds"))
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`button[data-provider=oidc]`)))
	atProvider()
	bt.Follow(t, ctx, chromedp.Click(chromedp.CSS(`#op-submit`)))
	if loc := bt.Run(t, ctx, chromedp.Location()); loc != base+"/crowdfunds" {
		t.Fatalf("after signing in through the provider: at %s, want the page asked for", loc)
	}
	if email, _ := e.db.FindUserByEmail(t.Context(), "wanderer@example.com"); email == nil || email.HasPassword() {
		t.Fatalf("the account made through the provider: %+v", email)
	}
}
