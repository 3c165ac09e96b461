package messenger

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hoard/hoard"
)

func TestTypedErrors(t *testing.T) {
	cause := errors.New("rpc error code 400: CHANNEL_PRIVATE")
	err := fmt.Errorf("history of 42: %w", errors.Join(ErrAccessLost, cause))
	if !errors.Is(err, ErrAccessLost) || !errors.Is(err, cause) {
		t.Fatal("errors.Is lost the sentinel or the cause")
	}
	if hoard.ErrorCode(err) != hoard.EFORBIDDEN {
		t.Fatalf("code %q", hoard.ErrorCode(err))
	}
	fw := fmt.Errorf("upload: %w", &FloodWait{RetryAfter: 3 * time.Second, Method: "upload.saveBigFilePart"})
	if !errors.Is(fw, ErrRateLimited) || hoard.ErrorCode(fw) != hoard.ERATELIMITED {
		t.Fatal("FloodWait does not match ErrRateLimited")
	}
	got, ok := AsFloodWait(fw)
	if !ok || got.RetryAfter != 3*time.Second {
		t.Fatalf("AsFloodWait = %v, %v", got, ok)
	}
	if _, ok := AsFloodWait(err); ok {
		t.Fatal("AsFloodWait matched a non-flood error")
	}
	de := &DownloadError{Offset: 1 << 20, Err: fw}
	if !errors.Is(de, ErrRateLimited) || de.Error() == "" {
		t.Fatal("DownloadError does not unwrap")
	}
	if MaxUploadSize(false) != 2097152000 || MaxUploadSize(true) != 4194304000 {
		t.Fatal("upload caps")
	}
}
