package store

import (
	"context"
	"time"

	"github.com/hoard/hoard"
	"github.com/jackc/pgx/v5"
)

// What a user holds on the upload volume is counted in upload_usage (one
// row per user) and, for each upload, in manual_uploads.held_bytes; every
// change moves both in one transaction, so that the user's row is always
// the sum of the user's uploads.

// ReserveUploadBytes adds n bytes to what an upload and its user hold when
// the user's total stays within limit, in one statement on the user's row:
// concurrent requests of one user are serialised by that row and cannot
// pass the limit together. ok is false when the reservation was refused
// (nothing changed); left is what the user had left of limit before it
// (never negative). An unknown upload is ENOTFOUND.
func (db *DB) ReserveUploadBytes(ctx context.Context, uploadID, n, limit int64) (ok bool, left int64, err error) {
	const op = "reserve upload bytes"
	var userID int64
	err = db.q.QueryRow(ctx, `SELECT coalesce(user_id, 0) FROM manual_uploads WHERE id = $1`, uploadID).Scan(&userID)
	if isNoRows(err) {
		return false, 0, hoard.Errorf(hoard.ENOTFOUND, "%s: no upload %d", op, uploadID)
	}
	if err != nil {
		return false, 0, wrap(op, err)
	}
	if _, err := db.q.Exec(ctx, `INSERT INTO upload_usage (user_id) VALUES ($1) ON CONFLICT DO NOTHING`, userID); err != nil {
		return false, 0, wrap(op, err)
	}
	tag, err := db.q.Exec(ctx, `
		WITH g AS (
			UPDATE upload_usage SET held_bytes = held_bytes + $2, updated_at = now()
			WHERE user_id = $4 AND held_bytes + $2 <= $3
			RETURNING held_bytes)
		UPDATE manual_uploads SET held_bytes = held_bytes + $2, updated_at = now()
		WHERE id = $1 AND EXISTS (SELECT 1 FROM g)`, uploadID, n, limit, userID)
	if err != nil {
		return false, 0, wrap(op, err)
	}
	if tag.RowsAffected() == 1 {
		return true, 0, nil
	}
	held, err := db.UploadBytesHeld(ctx, userID)
	if err != nil {
		return false, 0, err
	}
	return false, max(limit-held, 0), nil
}

// UploadBytesHeld is what a user holds on the upload volume: the bytes of
// the user's files still kept there, plus what requests streaming right
// now have reserved.
func (db *DB) UploadBytesHeld(ctx context.Context, userID int64) (int64, error) {
	var held int64
	err := db.q.QueryRow(ctx, `SELECT coalesce((SELECT held_bytes FROM upload_usage WHERE user_id = $1), 0)`, userID).Scan(&held)
	if err != nil {
		return 0, wrap("upload bytes held", err)
	}
	return held, nil
}

// SettleUploadBytes sets what an upload holds to held (the bytes of the
// files it stored, once the request streamed them all) and moves its
// user's count by the difference.
func (db *DB) SettleUploadBytes(ctx context.Context, uploadID, held int64) error {
	_, err := db.q.Exec(ctx, `
		WITH old AS (SELECT id, user_id, held_bytes FROM manual_uploads WHERE id = $1 FOR UPDATE),
		u AS (UPDATE manual_uploads m SET held_bytes = $2 FROM old WHERE m.id = old.id RETURNING m.id)
		UPDATE upload_usage g SET held_bytes = greatest(g.held_bytes + $2 - old.held_bytes, 0), updated_at = now()
		FROM old WHERE g.user_id = old.user_id`, uploadID, held)
	return wrap("settle upload bytes", err)
}

// releaseUploadBytes gives back n bytes an upload holds (at most what it
// holds) from the upload and its user.
func (db *DB) releaseUploadBytes(ctx context.Context, uploadID, n int64) error {
	_, err := db.q.Exec(ctx, `
		WITH old AS (SELECT id, user_id, least($2::bigint, held_bytes) AS n FROM manual_uploads WHERE id = $1 FOR UPDATE),
		u AS (UPDATE manual_uploads m SET held_bytes = m.held_bytes - old.n FROM old WHERE m.id = old.id RETURNING m.id)
		UPDATE upload_usage g SET held_bytes = greatest(g.held_bytes - old.n, 0), updated_at = now()
		FROM old WHERE g.user_id = old.user_id`, uploadID, n)
	return wrap("release upload bytes", err)
}

// DeleteManualUpload deletes a finished upload (COMPLETED, PARTIAL or
// FAILED) with its files' rows and gives back what it held of its user's
// quota; the caller removes its directory in the same transaction's
// lifetime (web: before the commit, by renaming it away). An upload still
// being received or processed is ECONFLICT, with a message that says to
// wait; an unknown one ENOTFOUND. Packages the upload published stay in
// the catalog.
func (db *DB) DeleteManualUpload(ctx context.Context, id int64) error {
	return db.deleteManualUpload(ctx, id, false)
}

// DiscardManualUpload deletes an upload in any state with its files' rows
// and gives back what it held: an upload refused while streaming, or one
// whose request died long ago (the clean-up). Unknown: ENOTFOUND.
func (db *DB) DiscardManualUpload(ctx context.Context, id int64) error {
	return db.deleteManualUpload(ctx, id, true)
}

func (db *DB) deleteManualUpload(ctx context.Context, id int64, anyState bool) error {
	const op = "delete upload"
	return db.InTx(ctx, func(tx *DB) error {
		var status string
		var held int64
		err := tx.q.QueryRow(ctx, `SELECT status, held_bytes FROM manual_uploads WHERE id = $1 FOR UPDATE`, id).Scan(&status, &held)
		if isNoRows(err) {
			return hoard.Errorf(hoard.ENOTFOUND, "%s: no upload %d", op, id)
		}
		if err != nil {
			return wrap(op, err)
		}
		if !anyState && hoard.UploadStatus(status).Phase() != "complete" {
			return hoard.Errorf(hoard.ECONFLICT,
				"Upload %d is still being processed; it can be deleted once it is complete.", id)
		}
		if err := tx.releaseUploadBytes(ctx, id, held); err != nil {
			return err
		}
		_, err = tx.q.Exec(ctx, `DELETE FROM manual_uploads WHERE id = $1`, id)
		return wrap(op, err)
	})
}

// ListExpiredUploadFiles returns files published and verified (COMPLETED)
// before before whose bytes are still on the volume, oldest first, at most
// limit (1–1000; 100 otherwise).
func (db *DB) ListExpiredUploadFiles(ctx context.Context, before time.Time, limit int) ([]hoard.ManualUploadFile, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	return getAll[hoard.ManualUploadFile](ctx, db.q, "list expired upload files",
		`SELECT `+uploadFileColumns+` FROM manual_upload_files WHERE status = 'COMPLETED' AND removed_at IS NULL
		AND updated_at < $1 ORDER BY updated_at, id LIMIT $2`, before, limit)
}

// MarkUploadFileRemoved records that a file's bytes were removed from the
// volume and gives its size back to its upload and user, in one
// transaction. It reports false (and changes nothing) for a file already
// marked; an unknown file is ENOTFOUND.
func (db *DB) MarkUploadFileRemoved(ctx context.Context, fileID int64) (bool, error) {
	const op = "mark upload file removed"
	var removed bool
	err := db.InTx(ctx, func(tx *DB) error {
		var uploadID, size int64
		var at *time.Time
		err := tx.q.QueryRow(ctx, `SELECT upload_id, file_size, removed_at FROM manual_upload_files WHERE id = $1 FOR UPDATE`,
			fileID).Scan(&uploadID, &size, &at)
		if isNoRows(err) {
			return hoard.Errorf(hoard.ENOTFOUND, "%s: no file %d", op, fileID)
		}
		if err != nil || at != nil {
			return wrap(op, err)
		}
		if _, err := tx.q.Exec(ctx, `UPDATE manual_upload_files SET removed_at = now() WHERE id = $1`, fileID); err != nil {
			return wrap(op, err)
		}
		removed = true
		return tx.releaseUploadBytes(ctx, uploadID, size)
	})
	return removed, err
}

// ListStaleUploads returns the ids of uploads still receiving (UPLOADING)
// that nothing touched since before: their request died with its process.
func (db *DB) ListStaleUploads(ctx context.Context, before time.Time) ([]int64, error) {
	rows, err := db.q.Query(ctx, `SELECT id FROM manual_uploads WHERE status = 'UPLOADING' AND updated_at < $1 ORDER BY id LIMIT 100`, before)
	if err != nil {
		return nil, wrap("list stale uploads", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return ids, wrap("list stale uploads", err)
}
