package jobs

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hoard/hoard"
)

func TestLoginReason(t *testing.T) {
	tests := []struct {
		name  string
		cause error
		want  string
	}{
		{"hoard's own message once", fmt.Errorf("messenger client of account 3: %w",
			hoard.Errorf(hoard.EINVALID, "TELEGRAM_APP_ID and TELEGRAM_APP_HASH are not set: the worker cannot sign in to the messaging platform")),
			"TELEGRAM_APP_ID and TELEGRAM_APP_HASH are not set: the worker cannot sign in to the messaging platform"},
		{"a refusal in words", errors.New("send code: send code: send code: rpcDoRequest: rpc error code 400: PHONE_NUMBER_INVALID"),
			"The platform knows no account with this phone number."},
		{"an unknown refusal by name", errors.New("sign in: rpc error code 400: SOMETHING_NEW_HAPPENED"),
			"The platform refused the login (SOMETHING_NEW_HAPPENED)."},
		{"anything else as it is", errors.New("dial tcp 127.0.0.1:1: connection refused"), "dial tcp 127.0.0.1:1: connection refused"},
	}
	for _, tt := range tests {
		if got := loginReason(tt.cause); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
