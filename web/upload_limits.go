package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// Defaults of the upload limits (README: UPLOAD_QUOTA_BYTES,
// UPLOAD_MIN_FREE_BYTES, UPLOAD_RETENTION_DAYS).
const (
	DefaultUploadQuota     = 20 << 30
	DefaultUploadMinFree   = 5 << 30
	DefaultUploadRetention = 7 * 24 * time.Hour
)

// quotaChunk is how much a request of unknown length reserves of its
// user's quota at a time: one statement per 8 MiB streamed.
const quotaChunk = 8 << 20

// codeNoSpace is the error code of an upload refused because the upload
// volume is (nearly) full: 507, nothing the user did wrong.
const codeNoSpace = "no_space"

// uploadRefused is an upload stopped for the quota or the free space: its
// upload row and files are removed, not kept FAILED.
type uploadRefused struct{ err error }

func (e *uploadRefused) Error() string { return e.err.Error() }
func (e *uploadRefused) Unwrap() error { return e.err }

// uploadDefaults fills in the upload limits left zero.
func (d *Deps) uploadDefaults() {
	if d.UploadQuotaBytes == 0 {
		d.UploadQuotaBytes = DefaultUploadQuota
	}
	if d.UploadMinFreeBytes == 0 {
		d.UploadMinFreeBytes = DefaultUploadMinFree
	}
	if d.UploadRetention == 0 {
		d.UploadRetention = DefaultUploadRetention
	}
	if d.FreeSpace == nil {
		d.FreeSpace = hoard.FreeBytes
	}
}

// uploadQuota is what u may hold on the upload volume: administrators are
// exempt (they run the volume; the free-space floor still holds for them).
func (s *Server) uploadQuota(u *hoard.User) int64 {
	if u.IsAdmin() || s.deps.UploadQuotaBytes < 0 {
		return math.MaxInt64 / 2
	}
	return s.deps.UploadQuotaBytes
}

// checkUploadSpace refuses (codeNoSpace) when the upload volume has less
// than UPLOAD_MIN_FREE_BYTES free, or would have once need more bytes are
// written.
func (s *Server) checkUploadSpace(need int64) error {
	free, err := s.deps.FreeSpace(s.deps.UploadDir)
	if err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	floor := max(s.deps.UploadMinFreeBytes, 0)
	switch {
	case free < floor:
		return &uploadRefused{hoard.Errorf(codeNoSpace, "The upload volume has only %s free and keeps %s free: "+
			"uploads are refused until an administrator frees space.", humanSize(free), humanSize(floor))}
	case free-need < floor:
		return &uploadRefused{hoard.Errorf(codeNoSpace, "This upload (%s) does not fit: the upload volume has %s free and keeps %s free.",
			humanSize(need), humanSize(free), humanSize(floor))}
	}
	return nil
}

// quotaExceeded is the 413 of an upload that would pass its user's quota.
func quotaExceeded(size, left, quota int64) error {
	what := "This upload"
	if size > 0 {
		what += " (" + humanSize(size) + ")"
	}
	return &uploadRefused{hoard.Errorf(hoard.ETOOLARGE, "%s is more than what is left of your upload quota: %s of %s. "+
		"Delete uploads you no longer need to make room.", what, humanSize(left), humanSize(quota))}
}

// quotaBody is a request body that reserves its user's quota as it is read
// (in quotaChunk steps, or all at once when the length was known), and
// stops the request as soon as it would pass the quota or the volume's
// free-space floor.
type quotaBody struct {
	io.ReadCloser
	ctx      context.Context
	s        *Server
	uploadID int64
	quota    int64
	read     int64
	reserved int64
}

// Read implements io.Reader.
func (b *quotaBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	if b.read > b.reserved {
		if rerr := b.reserve(b.read - b.reserved); rerr != nil {
			return 0, rerr
		}
	}
	return n, err
}

// reserve takes a chunk of the quota (at least need bytes), or just need
// when the chunk is refused.
func (b *quotaBody) reserve(need int64) error {
	ask := max(need, quotaChunk)
	if err := b.s.checkUploadSpace(ask); err != nil {
		return err
	}
	db := b.s.deps.DB
	ok, left, err := db.ReserveUploadBytes(b.ctx, b.uploadID, ask, b.quota)
	if err == nil && !ok && ask > need {
		ask = need
		ok, left, err = db.ReserveUploadBytes(b.ctx, b.uploadID, ask, b.quota)
	}
	if err != nil {
		return fmt.Errorf("upload: reserve quota: %w", err)
	}
	if !ok {
		// What was left before this upload took its share.
		return quotaExceeded(0, min(left+b.reserved, b.quota), b.quota)
	}
	b.reserved += ask
	return nil
}

// admitUpload makes the checks of an upload before a byte is streamed: the
// volume's free space, and, when the request's length is known, the
// user's quota (a first refusal without touching the database's rows; the
// reservation itself is atomic later).
func (s *Server) admitUpload(r *http.Request, quota int64) error {
	if err := s.checkUploadSpace(max(r.ContentLength, 0)); err != nil {
		return err
	}
	if r.ContentLength <= 0 {
		return nil
	}
	held, err := s.deps.DB.UploadBytesHeld(r.Context(), userFrom(r.Context()).ID)
	if err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	if left := max(quota-held, 0); r.ContentLength > left {
		return quotaExceeded(r.ContentLength, left, quota)
	}
	return nil
}

// limitUploadBody reserves a body of known length whole, and wraps the
// request's body in a quotaBody.
func (s *Server) limitUploadBody(r *http.Request, up *hoard.ManualUpload, quota int64) error {
	b := &quotaBody{ReadCloser: r.Body, ctx: r.Context(), s: s, uploadID: up.ID, quota: quota}
	if r.ContentLength > 0 {
		ok, left, err := s.deps.DB.ReserveUploadBytes(r.Context(), up.ID, r.ContentLength, quota)
		if err != nil {
			return fmt.Errorf("upload: reserve quota: %w", err)
		}
		if !ok {
			return quotaExceeded(r.ContentLength, left, quota)
		}
		b.reserved = r.ContentLength
	}
	r.Body = b
	return nil
}

// discardUpload removes what a failed request stored: its directory, and
// its row (a refused upload, or one without files) or, for any other
// failure, marks it FAILED with the reason, holding nothing.
func (s *Server) discardUpload(ctx context.Context, up *hoard.ManualUpload, cause error, keepRow bool) {
	ctx = context.WithoutCancel(ctx)
	if err := os.RemoveAll(filepath.Join(s.deps.UploadDir, strconv.FormatInt(up.ID, 10))); err != nil {
		s.deps.Logger.Warn("remove files of a failed upload", "upload", up.ID, "err", err)
	}
	var refused *uploadRefused
	if !keepRow || errors.As(cause, &refused) {
		if err := s.deps.DB.DiscardManualUpload(ctx, up.ID); err != nil {
			s.deps.Logger.Warn("discard upload", "upload", up.ID, "err", err)
		}
		return
	}
	err := s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		if err := tx.SetManualUploadStatus(ctx, up.ID, hoard.UploadFailed, hoard.ErrorMessage(cause)); err != nil {
			return err
		}
		return tx.SettleUploadBytes(ctx, up.ID, 0)
	})
	if err != nil {
		s.deps.Logger.Warn("mark upload failed", "upload", up.ID, "err", err)
	}
}

// handleDeleteUpload deletes an upload (POST /uploads/{id}/delete, the
// owner or an administrator; other users' are not found): its rows and its
// files on the volume, its bytes given back to its owner's quota; the
// packages it published stay. An upload still being received or processed
// is refused (409) with a message to wait. The directory is moved aside
// inside the transaction and put back should the commit fail, so rows and
// files never disagree.
func (s *Server) handleDeleteUpload(w http.ResponseWriter, r *http.Request) error {
	up, err := s.findOwnUpload(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	dir := filepath.Join(s.deps.UploadDir, strconv.FormatInt(up.ID, 10))
	trash := filepath.Join(s.deps.UploadDir, fmt.Sprintf(".deleted-%d-%d", up.ID, time.Now().UnixNano()))
	moved := false
	err = s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		if err := tx.DeleteManualUpload(ctx, up.ID); err != nil {
			return err
		}
		err := os.Rename(dir, trash)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("move files aside: %w", err)
		}
		moved = err == nil
		return nil
	})
	if err != nil {
		if moved {
			if rerr := os.Rename(trash, dir); rerr != nil {
				s.deps.Logger.Error("put back files of an upload", "upload", up.ID, "err", rerr)
			}
		}
		return fmt.Errorf("delete upload %d: %w", up.ID, err)
	}
	if moved {
		if err := os.RemoveAll(trash); err != nil {
			s.deps.Logger.Warn("remove files of a deleted upload", "upload", up.ID, "dir", trash, "err", err)
		}
	}
	s.deps.Logger.Info("upload deleted", "upload", up.ID, "user", userFrom(ctx).ID)
	if !wantsJSON(r) || fromPage(r) {
		return redirect(w, r, "/uploads?done=upload-deleted")
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": up.ID, "message": noticeFor("upload-deleted")})
	return nil
}

// retentionText says for how long a published file is kept.
func (s *Server) retentionText() string {
	if s.deps.UploadRetention < 0 {
		return "until the next clean-up (within the hour)"
	}
	d := s.deps.UploadRetention
	if d%(24*time.Hour) == 0 {
		if days := int(d / (24 * time.Hour)); days != 1 {
			return fmt.Sprintf("for %d days", days)
		}
		return "for 1 day"
	}
	return "for " + d.String()
}

// keptText says what becomes of one file's bytes on the volume.
func (s *Server) keptText(f hoard.ManualUploadFile) string {
	switch {
	case f.RemovedAt != nil:
		return "removed from the server"
	case f.Status == hoard.UploadFailed:
		return "kept until retried or deleted"
	case f.Status != hoard.UploadCompleted:
		return "kept while it is processed"
	case s.deps.UploadRetention < 0:
		return "removed at the next clean-up"
	}
	return "kept until " + f.UpdatedAt.Add(s.deps.UploadRetention).UTC().Format("2006-01-02 15:04 UTC")
}
