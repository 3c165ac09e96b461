package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
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
// being held in memory, up to the configured size per file. The request's
// bytes are reserved of the user's quota (UPLOAD_QUOTA_BYTES; all at once
// when its length is known, else as they stream) and the volume must keep
// UPLOAD_MIN_FREE_BYTES free: an upload that would pass either is refused
// (413, saying how much is left; 507) before a byte is stored when its
// length is known, or as soon as it passes, and leaves no row and no file.
// The rows, the manual_upload job and the manual_upload notification commit
// in one transaction; an upload that fails otherwise leaves a FAILED row
// with the reason and no files.
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
	user := userFrom(ctx)
	quota := s.uploadQuota(user)
	if err := s.admitUpload(r, quota); err != nil {
		return err
	}
	up, err := s.deps.DB.CreateManualUpload(ctx, user.ID, "")
	if err != nil {
		return err
	}
	if err := s.limitUploadBody(r, up, quota); err != nil {
		s.discardUpload(ctx, up, err, false)
		return err
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.deps.MaxUploadBytes*maxFilesPerUpload+1<<20)
	mr, err := r.MultipartReader()
	if err != nil {
		s.discardUpload(ctx, up, err, false)
		return hoard.Errorf(hoard.EINVALID, "Send the files as multipart/form-data.")
	}
	files, groupName, err := s.receiveUpload(mr, up)
	if err != nil {
		// An upload that began storing a file stays FAILED with the reason.
		_, serr := os.Stat(filepath.Join(s.deps.UploadDir, strconv.FormatInt(up.ID, 10)))
		s.discardUpload(ctx, up, err, serr == nil)
		return err
	}
	if err := s.queueUpload(ctx, up, files, groupName); err != nil {
		s.discardUpload(ctx, up, err, true)
		return err
	}
	s.deps.Logger.Info("upload received", "upload", up.ID, "files", len(files), "user", user.ID)
	if r.URL.Query().Get("from") == "page" {
		return redirect(w, r, "/uploads/"+strconv.FormatInt(up.ID, 10))
	}
	full, err := s.deps.DB.FindManualUpload(ctx, up.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, s.toUploadJSON(full))
	return nil
}

// receiveUpload reads the parts of an upload's body: its group name and
// its files, each streamed to the upload's directory.
func (s *Server) receiveUpload(mr *multipart.Reader, up *hoard.ManualUpload) (files []storedFile, groupName string, err error) {
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return files, "", uploadReadError(err)
		}
		switch {
		case part.FormName() == "group_name" && part.FileName() == "":
			// A form field of the multipart body: the checks checkParams
			// gives every other route's fields.
			b, err := io.ReadAll(io.LimitReader(part, maxParamBytes+1))
			if err != nil {
				return files, "", uploadReadError(err)
			}
			if err := checkText("group_name", string(b), maxParamBytes); err != nil {
				return files, "", err
			}
			if groupName = strings.TrimSpace(string(b)); utf8.RuneCountInString(groupName) > maxParamLen {
				return files, "", hoard.Errorf(hoard.EINVALID, "group_name is too long (%d characters at most).", maxParamLen)
			}
			continue
		case part.FileName() == "":
			continue
		}
		if len(files) == maxFilesPerUpload {
			return files, "", hoard.Errorf(hoard.EINVALID, "Upload at most %d files at a time.", maxFilesPerUpload)
		}
		if len(files) == 0 {
			if err := os.MkdirAll(filepath.Join(s.deps.UploadDir, strconv.FormatInt(up.ID, 10)), 0o750); err != nil {
				return files, "", fmt.Errorf("upload: create directory: %w", err)
			}
		}
		f, err := s.storeUploadPart(up.ID, len(files)+1, part)
		if err != nil {
			return files, "", err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, "", hoard.Errorf(hoard.EINVALID, "The upload holds no files.")
	}
	return files, groupName, nil
}

// queueUpload records an upload's files, settles what it holds of its
// user's quota to their bytes, and queues its manual_upload job with the
// manual_upload notification, in one transaction.
func (s *Server) queueUpload(ctx context.Context, up *hoard.ManualUpload, files []storedFile, groupName string) error {
	return s.deps.DB.InTx(ctx, func(tx *store.DB) error {
		var held int64
		for _, f := range files {
			if _, err := tx.AddManualUploadFile(ctx, up.ID, f.name, f.rel, f.size); err != nil {
				return err
			}
			held += f.size
		}
		if err := tx.SettleUploadBytes(ctx, up.ID, held); err != nil {
			return err
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
	var refused *uploadRefused
	if errors.As(err, &refused) {
		return refused
	}
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
	// Kept says what becomes of the file's bytes on the server (retention).
	Kept    string `json:"kept"`
	Removed bool   `json:"removed"`
}

type uploadJSON struct {
	ID        int64  `json:"id"`
	Status    string `json:"status"`
	Phase     string `json:"phase"`
	GroupName string `json:"group_name,omitempty"`
	// GroupID is the group the upload's packages joined (0: none yet).
	GroupID   int64            `json:"group_id,omitempty"`
	Error     string           `json:"error,omitempty"`
	CreatedAt string           `json:"created_at"`
	Files     []uploadFileJSON `json:"files"`
}

func (s *Server) toUploadJSON(up *hoard.ManualUpload) uploadJSON {
	out := uploadJSON{ID: up.ID, Status: string(up.Status), Phase: up.Status.Phase(), GroupName: up.GroupName, GroupID: up.PackageGroupID,
		Error: up.ErrorMessage, CreatedAt: up.CreatedAt.UTC().Format(time.RFC3339), Files: []uploadFileJSON{}}
	for _, f := range up.Files {
		out.Files = append(out.Files, uploadFileJSON{ID: f.ID, Name: f.FileName, Size: f.FileSize, Status: string(f.Status),
			Phase: f.Status.Phase(), Error: f.ErrorMessage, PackageID: f.PackageID, Kept: s.keptText(f), Removed: f.RemovedAt != nil})
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
	writeJSON(w, http.StatusOK, s.toUploadJSON(up))
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
	// Delete offers the delete button (a finished upload).
	Delete bool
	// Retention says for how long published files are kept ("for 7 days").
	Retention string
	// Held and Left are what the user holds on the server and has left of
	// Quota ("" for an administrator, who has none).
	Held, Left, Quota string
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
	data := uploadsPage{Uploads: ups, Max: humanSize(s.deps.MaxUploadBytes), Blocked: blocked, Retention: s.retentionText()}
	me := userFrom(r.Context())
	if quota := s.uploadQuota(me); !me.IsAdmin() && s.deps.UploadQuotaBytes > 0 {
		held, err := s.deps.DB.UploadBytesHeld(r.Context(), me.ID)
		if err != nil {
			return err
		}
		data.Held, data.Left, data.Quota = humanSize(held), humanSize(max(quota-held, 0)), humanSize(quota)
	}
	return s.render(w, r, http.StatusOK, "uploads", page{Title: "Upload", Notice: noticeFor(r.URL.Query().Get("done")), Data: data})
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
	j := s.toUploadJSON(up)
	retry := up.Status == hoard.UploadFailed || up.Status == hoard.UploadPartial
	return s.render(w, r, http.StatusOK, "upload", page{Title: "Upload " + strconv.FormatInt(up.ID, 10),
		Notice: noticeFor(r.URL.Query().Get("done")), Data: uploadsPage{Upload: &j, Retry: retry,
			Delete: up.Status.Phase() == "complete", Retention: s.retentionText()}})
}
