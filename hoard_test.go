package hoard

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestErrorCodesAndMessages(t *testing.T) {
	cause := errors.New("db down")
	tests := []struct {
		err       error
		code, msg string
	}{
		{nil, "", ""},
		{cause, EINTERNAL, "An internal error has occurred."},
		{Errorf(ENOTFOUND, "No such %s.", "package"), ENOTFOUND, "No such package."},
		{fmt.Errorf("wrapped: %w", WrapError(ECONFLICT, cause, "Already there.")), ECONFLICT, "Already there."},
	}
	for _, tt := range tests {
		if got := ErrorCode(tt.err); got != tt.code {
			t.Errorf("ErrorCode(%v) = %q, want %q", tt.err, got, tt.code)
		}
		if got := ErrorMessage(tt.err); got != tt.msg {
			t.Errorf("ErrorMessage(%v) = %q, want %q", tt.err, got, tt.msg)
		}
	}
	e := WrapError(EINVALID, cause, "Bad input.")
	if !errors.Is(e, cause) || e.Error() != "invalid: Bad input.: db down" {
		t.Fatalf("wrapped error: %v", e)
	}
}

func TestEnumValidity(t *testing.T) {
	for _, tt := range []struct {
		ok   bool
		name string
	}{
		{ArchiveType("ZIP").Valid(), "ZIP"}, {!ArchiveType("TAR").Valid(), "TAR"},
		{GroupingSource("AUTO_ZIP").Valid(), "AUTO_ZIP"}, {!GroupingSource("AUTO").Valid(), "AUTO"},
		{NotificationType("ORPHANED_INDEX").Valid(), "ORPHANED_INDEX"}, {!NotificationType("INTEGRITY_AUDIT").Valid(), "INTEGRITY_AUDIT"},
		{SkipReason("HASH_MISMATCH").Valid(), "HASH_MISMATCH"}, {!SkipReason("RATE_LIMITED").Valid(), "RATE_LIMITED"},
		{NotifyMissingPart.Repairable() && NotifyHashMismatch.Repairable() && !NotifyUploadFailed.Repairable(), "repairable"},
	} {
		if !tt.ok {
			t.Errorf("%s", tt.name)
		}
	}
}

func TestUploadPhases(t *testing.T) {
	for s, want := range map[UploadStatus]string{UploadUploading: "upload", UploadPending: "processing", UploadProcessing: "processing",
		UploadCompleted: "complete", UploadPartial: "complete", UploadFailed: "complete"} {
		if got := s.Phase(); got != want {
			t.Errorf("%s.Phase() = %q, want %q", s, got, want)
		}
	}
}

func TestInviteUsable(t *testing.T) {
	now := time.Now()
	past, future := now.Add(-time.Minute), now.Add(time.Minute)
	for _, tt := range []struct {
		inv  InviteCode
		want bool
	}{
		{InviteCode{MaxUses: 1}, true},
		{InviteCode{MaxUses: 1, UseCount: 1}, false},
		{InviteCode{MaxUses: 2, UseCount: 1, ExpiresAt: &future}, true},
		{InviteCode{MaxUses: 2, ExpiresAt: &past}, false},
	} {
		if got := tt.inv.Usable(now); got != tt.want {
			t.Errorf("%+v.Usable = %v", tt.inv, got)
		}
	}
	var nilUser *User
	if nilUser.IsAdmin() || !(&User{Role: RoleAdmin}).IsAdmin() {
		t.Fatal("IsAdmin")
	}
}
