package store

import (
	"context"

	"github.com/hoard/hoard"
)

const extractionColumns = `id, package_id, entry_path, status, method, bytes_downloaded, error_message,
	coalesce(requested_by, 0) AS requested_by, coalesce(river_job_id, 0) AS river_job_id, created_at, updated_at, finished_at`

// previewImageExtensions are the package_files extensions offered as
// previews (archive.IsImageName's list, lower case, without the dot).
var previewImageExtensions = []string{"jpg", "jpeg", "png", "webp", "gif"}

// CreatePreviewExtraction records a PENDING extraction of the entry at
// entryPath of a package, requested by userID (0 for none). Call it in the
// transaction that inserts the extraction's job, then
// SetPreviewExtractionJob. ECONFLICT while another extraction of the same
// entry is unfinished; EINVALID for an unknown package.
func (db *DB) CreatePreviewExtraction(ctx context.Context, packageID int64, entryPath string, userID int64) (*hoard.PreviewExtraction, error) {
	return getOne[hoard.PreviewExtraction](ctx, db.q, "create preview extraction",
		`INSERT INTO preview_extractions (package_id, entry_path, requested_by) VALUES ($1, $2, $3) RETURNING `+extractionColumns,
		packageID, entryPath, nullInt(userID))
}

// SetPreviewExtractionJob records the River job that works an extraction.
func (db *DB) SetPreviewExtractionJob(ctx context.Context, id, jobID int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE preview_extractions SET river_job_id = $2, updated_at = now() WHERE id = $1`, id, jobID)
	return notFoundIfNone("set preview extraction job", tag, err)
}

// FindPreviewExtraction returns an extraction of a package; ENOTFOUND when
// there is none with that id for that package.
func (db *DB) FindPreviewExtraction(ctx context.Context, packageID, id int64) (*hoard.PreviewExtraction, error) {
	return getOne[hoard.PreviewExtraction](ctx, db.q, "find preview extraction",
		`SELECT `+extractionColumns+` FROM preview_extractions WHERE id = $1 AND package_id = $2`, id, packageID)
}

// FindUnfinishedPreviewExtraction returns the PENDING or RUNNING extraction
// of a package's entry; ENOTFOUND when there is none.
func (db *DB) FindUnfinishedPreviewExtraction(ctx context.Context, packageID int64, entryPath string) (*hoard.PreviewExtraction, error) {
	return getOne[hoard.PreviewExtraction](ctx, db.q, "find unfinished preview extraction",
		`SELECT `+extractionColumns+` FROM preview_extractions
		WHERE package_id = $1 AND md5(entry_path) = md5($2) AND entry_path = $2 AND status IN ('PENDING', 'RUNNING')`,
		packageID, entryPath)
}

// FindLatestPreviewExtraction returns a package's most recent extraction;
// ENOTFOUND when it has none.
func (db *DB) FindLatestPreviewExtraction(ctx context.Context, packageID int64) (*hoard.PreviewExtraction, error) {
	return getOne[hoard.PreviewExtraction](ctx, db.q, "find latest preview extraction",
		`SELECT `+extractionColumns+` FROM preview_extractions WHERE package_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`, packageID)
}

// StartPreviewExtraction moves an unfinished extraction to RUNNING (again,
// on a retry) and returns it. ENOTFOUND when it does not exist or has
// already finished, so a late retry does nothing.
func (db *DB) StartPreviewExtraction(ctx context.Context, id int64) (*hoard.PreviewExtraction, error) {
	return getOne[hoard.PreviewExtraction](ctx, db.q, "start preview extraction",
		`UPDATE preview_extractions SET status = 'RUNNING', updated_at = now()
		WHERE id = $1 AND status IN ('PENDING', 'RUNNING') RETURNING `+extractionColumns, id)
}

// NotePreviewExtraction records, on an unfinished extraction, how its bytes
// are being fetched, the bytes downloaded so far by all attempts, and the
// error of a failed attempt that will be retried ("" for none).
func (db *DB) NotePreviewExtraction(ctx context.Context, id int64, method string, bytesDownloaded int64, message string) error {
	_, err := db.q.Exec(ctx, `UPDATE preview_extractions SET method = $2, bytes_downloaded = $3, error_message = $4, updated_at = now()
		WHERE id = $1 AND status IN ('PENDING', 'RUNNING')`, id, method, bytesDownloaded, message)
	return wrap("note preview extraction", err)
}

// FinishPreviewExtraction moves an unfinished extraction to DONE (message
// "") or FAILED with how its bytes were fetched. It reports false when the
// extraction had already finished, which makes the end exactly-once. Run it
// in the transaction that stores the preview (SetPackagePreview).
func (db *DB) FinishPreviewExtraction(ctx context.Context, id int64, status hoard.ExtractionStatus, method string, bytesDownloaded int64, message string) (bool, error) {
	if !status.Final() {
		return false, hoard.Errorf(hoard.EINVALID, "finish preview extraction: %s is not a final status", status)
	}
	tag, err := db.q.Exec(ctx, `UPDATE preview_extractions SET status = $2, method = $3, bytes_downloaded = $4, error_message = $5,
		finished_at = now(), updated_at = now() WHERE id = $1 AND status IN ('PENDING', 'RUNNING')`,
		id, string(status), method, bytesDownloaded, message)
	if err != nil {
		return false, wrap("finish preview extraction", err)
	}
	return tag.RowsAffected() == 1, nil
}

// FindPackageFileByPath returns the entry of a package's listing with
// exactly that path; ENOTFOUND when there is none.
func (db *DB) FindPackageFileByPath(ctx context.Context, packageID int64, path string) (*hoard.PackageFile, error) {
	return getOne[hoard.PackageFile](ctx, db.q, "find package file",
		`SELECT id, package_id, ordinal, path, file_name, extension, size, compressed_size, crc32
		FROM package_files WHERE package_id = $1 AND path = $2 ORDER BY ordinal LIMIT 1`, packageID, path)
}

// ListPackageImageFiles returns up to limit image entries (jpg, jpeg, png,
// webp, gif) of a package of at most maxSize bytes, in listing order, macOS
// resource forks left out: the candidates of "choose a preview".
func (db *DB) ListPackageImageFiles(ctx context.Context, packageID int64, maxSize int64, limit int) ([]hoard.PackageFile, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	return getAll[hoard.PackageFile](ctx, db.q, "list package image files", `
		SELECT id, package_id, ordinal, path, file_name, extension, size, compressed_size, crc32
		FROM package_files
		WHERE package_id = $1 AND lower(extension) = ANY($2) AND size <= $3
			AND position('__MACOSX/' in path) = 0 AND left(file_name, 2) <> '._'
		ORDER BY ordinal LIMIT $4`, packageID, previewImageExtensions, maxSize, limit)
}
