package emulator

import (
	"testing"
	"time"

	"github.com/gotd/td/tg"
)

// TestUploadedPartsExpire checks that a file posted with a part older than
// the parts' life is answered FILE_PART_X_MISSING (X: the first part
// missing), as the platform answers for parts it no longer keeps, and that
// saving the part again mends it.
func TestUploadedPartsExpire(t *testing.T) {
	for _, tc := range []struct {
		name string
		// before runs after parts 0–2 of file 1 were saved; it may wait,
		// expire or save parts again.
		before func(e *Emulator, save func(part int))
		life   time.Duration
		file   int64
		want   string
	}{
		{name: "fresh", life: time.Hour, file: 1},
		{name: "outlived", life: 5 * time.Millisecond, file: 1, before: func(*Emulator, func(int)) { time.Sleep(20 * time.Millisecond) },
			want: "FILE_PART_0_MISSING"},
		// The parts saved again must be young when the file is posted: a
		// life of milliseconds would make these depend on the machine's
		// speed, so the old parts are expired at once instead.
		{name: "only the last saved again", life: time.Hour, file: 1, before: func(e *Emulator, save func(int)) {
			e.ExpireUploadedParts()
			save(2)
		}, want: "FILE_PART_0_MISSING"},
		{name: "all saved again", life: time.Hour, file: 1, before: func(e *Emulator, save func(int)) {
			e.ExpireUploadedParts()
			save(0)
			save(1)
			save(2)
		}},
		{name: "expired at once", life: time.Hour, file: 1, before: func(e *Emulator, _ func(int)) { e.ExpireUploadedParts() },
			want: "FILE_PART_0_MISSING"},
		{name: "kept forever", life: -1, file: 1, before: func(e *Emulator, _ func(int)) { e.ExpireUploadedParts() }},
		{name: "never uploaded", life: time.Hour, file: 2, want: "FILE_PART_0_MISSING"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := testEmulator(t, false)
			e.SetUploadPartLife(tc.life)
			c := &call{e: e, user: e.account, method: "upload.saveBigFilePart"}
			save := func(part int) {
				t.Helper()
				if _, _, err := uploadSavePart(c, &tg.UploadSaveBigFilePartRequest{FileID: 1, FilePart: part, FileTotalParts: 3,
					Bytes: make([]byte, partMax)}); err != nil {
					t.Fatal(err)
				}
			}
			for part := range 3 {
				save(part)
			}
			if tc.before != nil {
				tc.before(e, save)
			}
			e.mu.Lock()
			_, _, _, err := c.takeUpload(&tg.InputFileBig{ID: tc.file, Parts: 3, Name: "x.zip"})
			e.mu.Unlock()
			if got := rpcType(err); got != tc.want {
				t.Fatalf("posting the file: %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}
