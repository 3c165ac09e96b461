package store

import (
	"context"

	"github.com/hoard/hoard"
)

const uploadColumns = `id, coalesce(user_id, 0) AS user_id, group_name, status, error_message,
	coalesce(package_group_id, 0) AS package_group_id, created_at, updated_at, finished_at, held_bytes`

const uploadFileColumns = `id, upload_id, file_name, stored_path, file_size, coalesce(content_hash, '') AS content_hash, status,
	error_message, coalesce(package_id, 0) AS package_id, created_at, updated_at, removed_at`

// CreateManualUpload starts an upload (UPLOADING) for a user.
func (db *DB) CreateManualUpload(ctx context.Context, userID int64, groupName string) (*hoard.ManualUpload, error) {
	return getOne[hoard.ManualUpload](ctx, db.q, "create upload",
		`INSERT INTO manual_uploads (user_id, group_name) VALUES ($1, $2) RETURNING `+uploadColumns, userID, groupName)
}

// AddManualUploadFile records a file that has been written to disk
// (status PENDING).
func (db *DB) AddManualUploadFile(ctx context.Context, uploadID int64, fileName, storedPath string, size int64) (*hoard.ManualUploadFile, error) {
	return getOne[hoard.ManualUploadFile](ctx, db.q, "add upload file", `
		INSERT INTO manual_upload_files (upload_id, file_name, stored_path, file_size, status) VALUES ($1, $2, $3, $4, 'PENDING')
		RETURNING `+uploadFileColumns, uploadID, fileName, storedPath, size)
}

// SetManualUploadStatus moves an upload to a status with an error message;
// final statuses stamp finished_at.
func (db *DB) SetManualUploadStatus(ctx context.Context, id int64, status hoard.UploadStatus, errorMessage string) error {
	tag, err := db.q.Exec(ctx, `UPDATE manual_uploads SET status = $2, error_message = $3, updated_at = now(),
		finished_at = CASE WHEN $2 IN ('COMPLETED', 'PARTIAL', 'FAILED') THEN now() ELSE NULL END WHERE id = $1`,
		id, string(status), errorMessage)
	return notFoundIfNone("set upload status", tag, err)
}

// SetManualUploadFileStatus moves one file to a status, with its error, hash
// and package once known (zero values leave them).
func (db *DB) SetManualUploadFileStatus(ctx context.Context, id int64, status hoard.UploadStatus, errorMessage, contentHash string, packageID int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE manual_upload_files SET status = $2, error_message = $3,
		content_hash = coalesce($4, content_hash), package_id = coalesce($5, package_id), updated_at = now() WHERE id = $1`,
		id, string(status), errorMessage, nullString(contentHash), nullInt(packageID))
	return notFoundIfNone("set upload file status", tag, err)
}

// FindManualUpload returns an upload with its files in upload order.
func (db *DB) FindManualUpload(ctx context.Context, id int64) (*hoard.ManualUpload, error) {
	up, err := getOne[hoard.ManualUpload](ctx, db.q, "find upload", `SELECT `+uploadColumns+` FROM manual_uploads WHERE id = $1`, id)
	if err != nil {
		return nil, err
	}
	up.Files, err = getAll[hoard.ManualUploadFile](ctx, db.q, "find upload",
		`SELECT `+uploadFileColumns+` FROM manual_upload_files WHERE upload_id = $1 ORDER BY id`, id)
	return up, err
}

// ListManualUploads returns a user's uploads, newest first (0 = everyone's),
// without their files.
func (db *DB) ListManualUploads(ctx context.Context, userID int64, limit int) ([]hoard.ManualUpload, error) {
	if limit <= 0 || limit > 200 {
		limit = 20
	}
	return getAll[hoard.ManualUpload](ctx, db.q, "list uploads",
		`SELECT `+uploadColumns+` FROM manual_uploads WHERE $1::bigint = 0 OR user_id = $1 ORDER BY id DESC LIMIT $2`, userID, limit)
}

// SetManualUploadGroupName names the group the files of an upload form.
func (db *DB) SetManualUploadGroupName(ctx context.Context, id int64, name string) error {
	tag, err := db.q.Exec(ctx, `UPDATE manual_uploads SET group_name = $2, updated_at = now() WHERE id = $1`, id, name)
	return notFoundIfNone("set upload group name", tag, err)
}

// FindManualUploadFile returns one file of an upload.
func (db *DB) FindManualUploadFile(ctx context.Context, id int64) (*hoard.ManualUploadFile, error) {
	return getOne[hoard.ManualUploadFile](ctx, db.q, "find upload file",
		`SELECT `+uploadFileColumns+` FROM manual_upload_files WHERE id = $1`, id)
}

// SetManualUploadGroup records the group the files of an upload formed.
func (db *DB) SetManualUploadGroup(ctx context.Context, id, groupID int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE manual_uploads SET package_group_id = $2, updated_at = now() WHERE id = $1`, id, nullInt(groupID))
	return notFoundIfNone("set upload group", tag, err)
}

// RetryManualUpload gives a finished upload's FAILED files another go: they
// and the upload go back to PENDING (the upload's error and finished_at
// cleared), and it returns how many files that is. Files in the catalog
// stay as they are; a FAILED publication of a file is kept, so that the
// retry takes up the parts it posted. An upload that is not finished, or
// has no failed file, is EINVALID; an unknown one ENOTFOUND. Queue
// hoard.ManualUploadArgs in the same transaction.
func (db *DB) RetryManualUpload(ctx context.Context, id int64) (int, error) {
	const op = "retry upload"
	var status string
	var failed int
	err := db.q.QueryRow(ctx, `SELECT u.status, (SELECT count(*) FROM manual_upload_files f WHERE f.upload_id = u.id AND f.status = 'FAILED')
		FROM manual_uploads u WHERE u.id = $1 FOR UPDATE`, id).Scan(&status, &failed)
	if isNoRows(err) {
		return 0, hoard.Errorf(hoard.ENOTFOUND, "%s: no upload %d", op, id)
	}
	if err != nil {
		return 0, wrap(op, err)
	}
	if hoard.UploadStatus(status).Phase() != "complete" || failed == 0 {
		return 0, hoard.Errorf(hoard.EINVALID, "Upload %d has no failed file to retry.", id)
	}
	if _, err := db.q.Exec(ctx, `UPDATE manual_upload_files SET status = 'PENDING', error_message = '', updated_at = now()
		WHERE upload_id = $1 AND status = 'FAILED'`, id); err != nil {
		return 0, wrap(op, err)
	}
	if _, err := db.q.Exec(ctx, `UPDATE manual_uploads SET status = 'PENDING', error_message = '', finished_at = NULL,
		updated_at = now() WHERE id = $1`, id); err != nil {
		return 0, wrap(op, err)
	}
	return failed, nil
}
