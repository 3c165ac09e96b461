package messengertest

import (
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger/telegram"
)

// TestLoginAnswers signs the account in through each way the platform's
// auth.sendCode may answer.
func TestLoginAnswers(t *testing.T) {
	t.Parallel()
	type outcome struct {
		codeRequest bool   // a code to type is pending
		signedIn    bool   // signed in at the end
		refusal     string // the EINVALID message's start, when refused
	}
	for _, tt := range []struct {
		sentCode string
		want     outcome
	}{
		{"app", outcome{codeRequest: true, signedIn: true}},
		{"sms", outcome{codeRequest: true, signedIn: true}},
		{"email", outcome{codeRequest: true, signedIn: true}},
		{"success", outcome{signedIn: true}},
		{"setup_email", outcome{refusal: "The platform asks this account to set up a login e-mail"}},
		{"payment", outcome{refusal: "The platform sends this number's login code by SMS only after a payment"}},
	} {
		t.Run(tt.sentCode, func(t *testing.T) {
			t.Parallel()
			env := Start(t, DefaultSeedWith(t, t.TempDir(), func(seed map[string]any) {
				seed["account"].(map[string]any)["sent_code"] = tt.sentCode
			}))
			ctx := ctxT(t)
			acc, err := telegram.NewAccount(ctx, env.Config("account"))
			if err != nil {
				t.Fatal(err)
			}
			defer acc.Close()
			var got outcome
			if err := acc.SendCode(ctx, env.Info.Phone); err != nil {
				if hoard.ErrorCode(err) != hoard.EINVALID {
					t.Fatalf("send code: %v", err)
				}
				msg := hoard.ErrorMessage(err)
				got.refusal = msg[:min(len(msg), len(tt.want.refusal))]
			}
			_, got.codeRequest = acc.PendingCode()
			if got.codeRequest {
				if err := acc.SignIn(ctx, env.Info.Code); err != nil {
					t.Fatalf("sign in: %v", err)
				}
			}
			if got.signedIn, err = acc.Authorized(ctx); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			if got.signedIn {
				if _, err := acc.Self(ctx); err != nil {
					t.Fatalf("self after sign-in: %v", err)
				}
			}
		})
	}
}
