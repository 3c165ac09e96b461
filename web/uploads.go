package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
)

// maxFilesPerUpload bounds the files of one upload.
const maxFilesPerUpload = 50

// sanitizeFileName turns a browser-supplied file name into a display name:
// the last path element, without control characters, trimmed, at most 255
// bytes. It is never used to build a path.
func sanitizeFileName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, name)
	name = strings.Trim(name, " .")
	for len(name) > 255 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	if name == "" {
		return "file"
	}
	return name
}

type storedFile struct {
	name, rel string
	size      int64
}

// handleAPIUpload answers POST /api/uploads: multipart/form-data with one or
// more files (field "files") and an optional "group_name". Each file is
// streamed to UPLOAD_DIR/<upload>/<n> (a path the server chooses) without
// being held in memory, up to the configured size per file. The rows, the
// manual_upload job and the manual_upload notification commit in one
// transaction; a failed upload leaves a FAILED row with the reason and no
// files.
func (s *Server) handleAPIUpload(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	if s.deps.UploadDir == "" || s.deps.MaxUploadBytes <= 0 {
		return errors.New("upload: UPLOAD_DIR is not configured")
	}
	// Refused before a byte is streamed: with nowhere to publish, the files
	// would only wait.
	if err := s.deps.DB.CheckPublishTarget(ctx); err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.deps.MaxUploadBytes*maxFilesPerUpload+1<<20)
	mr, err := r.MultipartReader()
	if err != nil {
		return hoard.Errorf(hoard.EINVALID, "Send the files as multipart/form-data.")
	}
	user := userFrom(ctx)
	var up *hoard.ManualUpload
	var files []storedFile
	groupName := ""
	fail := func(cause error) error {
		if up != nil {
			_ = os.RemoveAll(filepath.Join(s.deps.UploadDir, strconv.FormatInt(up.ID, 10)))
			if err := s.deps.DB.SetManualUploadStatus(context.WithoutCancel(ctx), up.ID, hoard.UploadFailed,
				hoard.ErrorMessage(cause)); err != nil {
				s.deps.Logger.Warn("mark upload failed", "upload", up.ID, "err", err)
			}
		}
		return cause
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(uploadReadError(err))
		}
		switch {
		case part.FormName() == "group_name" && part.FileName() == "":
			// A form field of the multipart body: the checks checkParams
			// gives every other route's fields.
			b, _ := io.ReadAll(io.LimitReader(part, maxParamBytes+1))
			if err := checkText("group_name", string(b), maxParamBytes); err != nil {
				return fail(err)
			}
			if groupName = strings.TrimSpace(string(b)); utf8.RuneCountInString(groupName) > maxParamLen {
				return fail(hoard.Errorf(hoard.EINVALID, "group_name is too long (%d characters at most).", maxParamLen))
			}
			continue
		case part.FileName() == "":
			continue
		}
		if len(files) == maxFilesPerUpload {
			return fail(hoard.Errorf(hoard.EINVALID, "Upload at most %d files at a time.", maxFilesPerUpload))
		}
		if up == nil {
			if up, err = s.deps.DB.CreateManualUpload(ctx, user.ID, groupName); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Join(s.deps.UploadDir, strconv.FormatInt(up.ID, 10)), 0o750); err != nil {
				return fail(fmt.Errorf("upload: create directory: %w", err))
			}
		}
		f, err := s.storeUploadPart(up.ID, len(files)+1, part)
		if err != nil {
			return fail(err)
		}
		files = append(files, f)
	}
	if up == nil {
		return hoard.Errorf(hoard.EINVALID, "The upload holds no files.")
	}
	err = s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		for _, f := range files {
			if _, err := tx.AddManualUploadFile(ctx, up.ID, f.name, f.rel, f.size); err != nil {
				return err
			}
		}
		if groupName == "" && len(files) > 1 {
			groupName = strings.TrimSuffix(files[0].name, filepath.Ext(files[0].name))
		}
		if err := tx.SetManualUploadGroupName(ctx, up.ID, groupName); err != nil {
			return err
		}
		if err := tx.SetManualUploadStatus(ctx, up.ID, hoard.UploadPending, ""); err != nil {
			return err
		}
		if _, err := s.deps.Queue.InsertTx(ctx, tx.Tx(), hoard.ManualUploadArgs{UploadID: up.ID}, nil); err != nil {
			return fmt.Errorf("upload: queue job: %w", err)
		}
		payload, _ := json.Marshal(map[string]int64{"upload_id": up.ID})
		return tx.Notify(ctx, "manual_upload", string(payload))
	})
	if err != nil {
		return fail(err)
	}
	s.deps.Logger.Info("upload received", "upload", up.ID, "files", len(files), "user", user.ID)
	if r.URL.Query().Get("from") == "page" {
		return redirect(w, r, "/uploads/"+strconv.FormatInt(up.ID, 10))
	}
	full, err := s.deps.DB.FindManualUpload(ctx, up.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, toUploadJSON(full))
	return nil
}

// storeUploadPart streams one file part to UPLOAD_DIR/<upload>/<n>.
func (s *Server) storeUploadPart(uploadID int64, n int, part io.Reader) (f storedFile, err error) {
	rel := filepath.Join(strconv.FormatInt(uploadID, 10), strconv.Itoa(n))
	out, err := os.OpenFile(filepath.Join(s.deps.UploadDir, rel), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o640)
	if err != nil {
		return f, fmt.Errorf("upload: create file: %w", err)
	}
	defer func() {
		if cerr := out.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("upload: close file: %w", cerr)
		}
	}()
	name := ""
	if p, ok := part.(interface{ FileName() string }); ok {
		name = sanitizeFileName(p.FileName())
	}
	written, err := io.Copy(out, io.LimitReader(part, s.deps.MaxUploadBytes+1))
	if err != nil {
		return f, uploadReadError(err)
	}
	if written > s.deps.MaxUploadBytes {
		return f, hoard.Errorf(hoard.ETOOLARGE, "%s is larger than the upload limit of %s.", name, humanSize(s.deps.MaxUploadBytes))
	}
	return storedFile{name: name, rel: rel, size: written}, nil
}

// uploadReadError names a broken or oversized request body.
func uploadReadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return hoard.Errorf(hoard.ETOOLARGE, "The upload is too large.")
	}
	return hoard.WrapError(hoard.EINVALID, err, "The upload was interrupted or is not valid multipart data.")
}

type uploadFileJSON struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Size      int64  `json:"size"`
	Status    string `json:"status"`
	Phase     string `json:"phase"`
	Error     string `json:"error,omitempty"`
	PackageID int64  `json:"package_id,omitempty"`
}

type uploadJSON struct {
	ID        int64            `json:"id"`
	Status    string           `json:"status"`
	Phase     string           `json:"phase"`
	GroupName string           `json:"group_name,omitempty"`
	Error     string           `json:"error,omitempty"`
	CreatedAt string           `json:"created_at"`
	Files     []uploadFileJSON `json:"files"`
}

func toUploadJSON(up *hoard.ManualUpload) uploadJSON {
	out := uploadJSON{ID: up.ID, Status: string(up.Status), Phase: up.Status.Phase(), GroupName: up.GroupName,
		Error: up.ErrorMessage, CreatedAt: up.CreatedAt.UTC().Format(time.RFC3339), Files: []uploadFileJSON{}}
	for _, f := range up.Files {
		out.Files = append(out.Files, uploadFileJSON{ID: f.ID, Name: f.FileName, Size: f.FileSize, Status: string(f.Status),
			Phase: f.Status.Phase(), Error: f.ErrorMessage, PackageID: f.PackageID})
	}
	return out
}

// findOwnUpload loads the {id} upload of the caller (administrators: any);
// other users' uploads are not found.
func (s *Server) findOwnUpload(r *http.Request) (*hoard.ManualUpload, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return nil, err
	}
	up, err := s.deps.DB.FindManualUpload(r.Context(), id)
	me := userFrom(r.Context())
	if hoard.ErrorCode(err) == hoard.ENOTFOUND || (err == nil && up.UserID != me.ID && !me.IsAdmin()) {
		return nil, hoard.Errorf(hoard.ENOTFOUND, "No such upload.")
	}
	return up, err
}

// handleAPIUploadStatus answers GET /api/uploads/{id}: the upload's phase
// (upload, processing, complete) and each file's.
func (s *Server) handleAPIUploadStatus(w http.ResponseWriter, r *http.Request) error {
	up, err := s.findOwnUpload(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toUploadJSON(up))
	return nil
}

type uploadsPage struct {
	Uploads []hoard.ManualUpload
	Max     string
	Upload  *uploadJSON
	// Blocked says what to set up before files can be uploaded ("" when
	// nothing is missing).
	Blocked string
	// Retry offers the retry button (an upload that ended with failed
	// files).
	Retry bool
}

// publishBlocked is what keeps uploads from being published, for the
// upload pages ("" when nothing does).
func (s *Server) publishBlocked(r *http.Request) (string, error) {
	err := s.deps.DB.CheckPublishTarget(r.Context())
	if hoard.ErrorCode(err) == hoard.EINVALID {
		return hoard.ErrorMessage(err), nil
	}
	return "", err
}

// handleUploads renders the upload form and the caller's recent uploads;
// with nowhere to publish the form is replaced by what to set up.
func (s *Server) handleUploads(w http.ResponseWriter, r *http.Request) error {
	ups, err := s.deps.DB.ListManualUploads(r.Context(), userFrom(r.Context()).ID, 20)
	if err != nil {
		return err
	}
	blocked, err := s.publishBlocked(r)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "uploads", page{Title: "Upload",
		Data: uploadsPage{Uploads: ups, Max: humanSize(s.deps.MaxUploadBytes), Blocked: blocked}})
}

// handleRetryUpload retries an upload's failed files (POST
// /uploads/{id}/retry, the owner or an administrator): they go back to
// PENDING and a manual_upload job takes them up in one transaction (the
// parts a failed publication posted are kept). An upload still working, or
// with no failed file, is refused (422), as is one with still nowhere to
// publish (the message says what to set up).
func (s *Server) handleRetryUpload(w http.ResponseWriter, r *http.Request) error {
	up, err := s.findOwnUpload(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	var n int
	err = s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		if err := tx.CheckPublishTarget(ctx); err != nil {
			return err
		}
		var err error
		if n, err = tx.RetryManualUpload(ctx, up.ID); err != nil {
			return err
		}
		if _, err := s.insertJob(ctx, tx, hoard.ManualUploadArgs{UploadID: up.ID}); err != nil {
			return err
		}
		payload, _ := json.Marshal(map[string]int64{"upload_id": up.ID})
		return tx.Notify(ctx, "manual_upload", string(payload))
	})
	if err != nil {
		return fmt.Errorf("retry upload %d: %w", up.ID, err)
	}
	s.deps.Logger.Info("upload retried", "upload", up.ID, "files", n, "user", userFrom(ctx).ID)
	return answerQueued(w, r, "/uploads/"+strconv.FormatInt(up.ID, 10), "upload-retry", nil,
		map[string]any{"upload_id": up.ID, "files": n})
}

// handleUploadPage renders one upload's status; the page polls
// /api/uploads/{id} until it is complete.
func (s *Server) handleUploadPage(w http.ResponseWriter, r *http.Request) error {
	up, err := s.findOwnUpload(r)
	if err != nil {
		return err
	}
	j := toUploadJSON(up)
	retry := up.Status == hoard.UploadFailed || up.Status == hoard.UploadPartial
	return s.render(w, r, http.StatusOK, "upload", page{Title: "Upload " + strconv.FormatInt(up.ID, 10),
		Notice: noticeFor(r.URL.Query().Get("done")), Data: uploadsPage{Upload: &j, Retry: retry}})
}
