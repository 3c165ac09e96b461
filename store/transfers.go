package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/hoard/hoard"
	"github.com/jackc/pgx/v5"
)

const transferColumns = `id, coalesce(source_channel_id, 0) AS source_channel_id, coalesce(source_message_id, 0) AS source_message_id,
	coalesce(manual_upload_file_id, 0) AS manual_upload_file_id, coalesce(ingestion_run_id, 0) AS ingestion_run_id,
	account_id, dest_channel_id, status, spool_paths, keep_files, content_hash, draft, preview_data, parts_total,
	error_message, created_at, updated_at`

const transferPartColumns = `transfer_id, part_no, name, byte_offset AS offset, length,
	coalesce(resend_message_id, 0) AS resend_message_id, coalesce(dest_after_id, 0) AS dest_after_id,
	coalesce(dest_message_id, 0) AS dest_message_id, coalesce(upload_file_id, 0) AS upload_file_id,
	coalesce(upload_parts_done, 0) AS upload_parts_done, upload_saved_at`

// ErrSameContent is returned by CreateTransfer when a package with the same
// content hash is published or another transfer is publishing the same
// bytes: the caller has a duplicate (SPEC rule 4d), even when both copies
// were downloaded at the same time.
var ErrSameContent = errors.New("the same bytes are already published or being published")

// CreateTransfer inserts a transfer (status PUBLISHING) with its parts and
// sets t.ID. A second transfer for the same source set or upload file is
// ECONFLICT; one whose content hash is published or in flight from another
// source wraps ErrSameContent. Transfers of one hash are serialised by an
// advisory lock, so of two concurrent copies exactly one is published.
func (db *DB) CreateTransfer(ctx context.Context, t *hoard.Transfer, parts []hoard.TransferPart) error {
	if len(parts) == 0 {
		return hoard.Errorf(hoard.EINVALID, "create transfer: no parts")
	}
	t.PartsTotal = len(parts)
	t.Status = hoard.TransferPublishing
	return db.InTx(ctx, func(tx *DB) error {
		if t.ContentHash != "" {
			if _, err := tx.q.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "content:"+t.ContentHash); err != nil {
				return wrap("create transfer: lock content hash", err)
			}
			var holder string
			err := tx.q.QueryRow(ctx, `
				SELECT 'package ' || file_name FROM packages WHERE content_hash = $1 AND dest_channel_id IS NOT NULL
				UNION ALL
				SELECT 'upload of ' || (draft->>'FileName') FROM transfers
				 WHERE content_hash = $1 AND status <> 'FAILED'
				   AND NOT (source_channel_id IS NOT DISTINCT FROM $2 AND source_message_id IS NOT DISTINCT FROM $3
				        AND manual_upload_file_id IS NOT DISTINCT FROM $4)
				LIMIT 1`, t.ContentHash, nullInt(t.SourceChannelID), nullInt(t.SourceMessageID), nullInt(t.ManualUploadFileID)).Scan(&holder)
			switch {
			case err == nil:
				return fmt.Errorf("create transfer: %w: %s", ErrSameContent, holder)
			case !errors.Is(err, pgx.ErrNoRows):
				return wrap("create transfer: same content", err)
			}
		}
		err := tx.q.QueryRow(ctx, `
			INSERT INTO transfers (source_channel_id, source_message_id, manual_upload_file_id, ingestion_run_id, account_id,
				dest_channel_id, spool_paths, keep_files, content_hash, draft, preview_data, parts_total)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
			RETURNING id, created_at, updated_at`,
			nullInt(t.SourceChannelID), nullInt(t.SourceMessageID), nullInt(t.ManualUploadFileID), nullInt(t.IngestionRunID),
			t.AccountID, t.DestChannelID, nonNilStrings(t.SpoolPaths), t.KeepFiles, t.ContentHash, t.Draft, t.PreviewData,
			t.PartsTotal).Scan(&t.ID, &t.CreatedAt, &t.UpdatedAt)
		if err != nil {
			return wrap("create transfer", err)
		}
		rows := make([][]any, len(parts))
		for i, p := range parts {
			rows[i] = []any{t.ID, i, p.Name, p.Offset, p.Length, nullInt(p.ResendMessageID)}
		}
		_, err = tx.q.CopyFrom(ctx, pgx.Identifier{"transfer_parts"},
			[]string{"transfer_id", "part_no", "name", "byte_offset", "length", "resend_message_id"}, pgx.CopyFromRows(rows))
		return wrap("create transfer parts", err)
	})
}

// ResumeTransfer takes a FAILED transfer up again for a new attempt at the
// same bytes: new spool files, draft, preview and run, status PUBLISHING,
// no error. Its parts, and the destination messages they recorded, stay:
// what was posted is not posted again. ENOTFOUND unless the transfer is
// FAILED.
func (db *DB) ResumeTransfer(ctx context.Context, t *hoard.Transfer) error {
	err := db.q.QueryRow(ctx, `UPDATE transfers SET status = 'PUBLISHING', error_message = '', spool_paths = $2, draft = $3,
			preview_data = $4, ingestion_run_id = $5, updated_at = now()
		WHERE id = $1 AND status = 'FAILED' RETURNING updated_at`,
		t.ID, nonNilStrings(t.SpoolPaths), t.Draft, t.PreviewData, nullInt(t.IngestionRunID)).Scan(&t.UpdatedAt)
	if err != nil {
		return wrap("resume transfer", err)
	}
	t.Status, t.ErrorMessage = hoard.TransferPublishing, ""
	return nil
}

// FindTransfer returns a transfer.
func (db *DB) FindTransfer(ctx context.Context, id int64) (*hoard.Transfer, error) {
	return getOne[hoard.Transfer](ctx, db.q, "find transfer", `SELECT `+transferColumns+` FROM transfers WHERE id = $1`, id)
}

// FindTransferBySource returns the transfer of a source set (by its first
// message).
func (db *DB) FindTransferBySource(ctx context.Context, channelID, messageID int64) (*hoard.Transfer, error) {
	return getOne[hoard.Transfer](ctx, db.q, "find transfer by source",
		`SELECT `+transferColumns+` FROM transfers WHERE source_channel_id = $1 AND source_message_id = $2`, channelID, messageID)
}

// FindTransferByUploadFile returns the transfer of a manual upload file.
func (db *DB) FindTransferByUploadFile(ctx context.Context, fileID int64) (*hoard.Transfer, error) {
	return getOne[hoard.Transfer](ctx, db.q, "find transfer by upload file",
		`SELECT `+transferColumns+` FROM transfers WHERE manual_upload_file_id = $1`, fileID)
}

// ListUnfinishedTransfers returns the transfers still publishing or
// verifying, oldest first.
func (db *DB) ListUnfinishedTransfers(ctx context.Context) ([]hoard.Transfer, error) {
	return getAll[hoard.Transfer](ctx, db.q, "list unfinished transfers",
		`SELECT `+transferColumns+` FROM transfers WHERE status IN ('PUBLISHING', 'VERIFYING') ORDER BY id`)
}

// ListTransferParts returns the parts of a transfer in order: by their
// place in the bytes (a part split later keeps its number for its first
// piece and numbers the others after the last part, see
// SplitTransferPart), which is part-number order for a plan never split.
func (db *DB) ListTransferParts(ctx context.Context, transferID int64) ([]hoard.TransferPart, error) {
	return getAll[hoard.TransferPart](ctx, db.q, "list transfer parts",
		`SELECT `+transferPartColumns+` FROM transfer_parts WHERE transfer_id = $1 ORDER BY byte_offset, part_no`, transferID)
}

// SplitTransferPart replaces an unposted part of a publishing transfer by
// pieces, which must cover its bytes in order (the first at its offset):
// the first piece keeps the part's number, the others get numbers after
// the transfer's last, and parts_total counts them. It returns the new
// pieces' numbers. The transfer row is locked first, as RecordTransferPart
// locks it. ECONFLICT when the transfer is not publishing or the part was
// posted (or split) meanwhile.
func (db *DB) SplitTransferPart(ctx context.Context, transferID int64, partNo int, pieces []hoard.TransferPart) ([]int, error) {
	if len(pieces) < 2 {
		return nil, hoard.Errorf(hoard.EINVALID, "split transfer part: %d pieces", len(pieces))
	}
	var status string
	var last int
	err := db.q.QueryRow(ctx, `SELECT t.status, (SELECT max(part_no) FROM transfer_parts WHERE transfer_id = t.id)
		FROM transfers t WHERE t.id = $1 FOR UPDATE`, transferID).Scan(&status, &last)
	if err != nil {
		return nil, wrap("split transfer part", err)
	}
	var length, offset int64
	err = db.q.QueryRow(ctx, `SELECT length, byte_offset FROM transfer_parts
		WHERE transfer_id = $1 AND part_no = $2 AND dest_message_id IS NULL`, transferID, partNo).Scan(&length, &offset)
	if errors.Is(err, pgx.ErrNoRows) || status != string(hoard.TransferPublishing) {
		return nil, hoard.Errorf(hoard.ECONFLICT, "split transfer %d part %d: posted or no longer publishing", transferID, partNo)
	}
	if err != nil {
		return nil, wrap("split transfer part", err)
	}
	if err := checkPieces(offset, length, pieces); err != nil {
		return nil, err
	}
	if _, err := db.q.Exec(ctx, `UPDATE transfer_parts SET name = $3, length = $4, resend_message_id = NULL, dest_after_id = NULL,
			upload_file_id = NULL, upload_parts_done = NULL, upload_saved_at = NULL
		WHERE transfer_id = $1 AND part_no = $2`, transferID, partNo, pieces[0].Name, pieces[0].Length); err != nil {
		return nil, wrap("split transfer part", err)
	}
	nos := make([]int, len(pieces)-1)
	for i, p := range pieces[1:] {
		nos[i] = last + 1 + i
		if _, err := db.q.Exec(ctx, `INSERT INTO transfer_parts (transfer_id, part_no, name, byte_offset, length)
			VALUES ($1, $2, $3, $4, $5)`, transferID, nos[i], p.Name, p.Offset, p.Length); err != nil {
			return nil, wrap("split transfer part", err)
		}
	}
	_, err = db.q.Exec(ctx, `UPDATE transfers SET parts_total = parts_total + $2, updated_at = now() WHERE id = $1`,
		transferID, len(nos))
	return nos, wrap("split transfer part", err)
}

// checkPieces checks that pieces cover length bytes at offset, in order.
func checkPieces(offset, length int64, pieces []hoard.TransferPart) error {
	at := offset
	for _, p := range pieces {
		if p.Offset != at || p.Length <= 0 || p.Name == "" {
			return hoard.Errorf(hoard.EINVALID, "split transfer part: piece %q at %d+%d does not follow %d", p.Name, p.Offset, p.Length, at)
		}
		at += p.Length
	}
	if at != offset+length {
		return hoard.Errorf(hoard.EINVALID, "split transfer part: pieces end at %d, the part at %d", at, offset+length)
	}
	return nil
}

// FindTransferPart returns one part of a transfer.
func (db *DB) FindTransferPart(ctx context.Context, transferID int64, partNo int) (*hoard.TransferPart, error) {
	return getOne[hoard.TransferPart](ctx, db.q, "find transfer part",
		`SELECT `+transferPartColumns+` FROM transfer_parts WHERE transfer_id = $1 AND part_no = $2`, transferID, partNo)
}

// MarkTransferPartPosting records, before a part is posted, the newest
// destination message id known then: if the process dies after the platform
// stored the post but before RecordTransferPart, recovery finds the post
// after that id instead of posting it twice. An id recorded by an earlier
// attempt is kept (the post may be from that attempt).
func (db *DB) MarkTransferPartPosting(ctx context.Context, transferID int64, partNo int, afterID int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE transfer_parts SET dest_after_id = coalesce(dest_after_id, $3)
		WHERE transfer_id = $1 AND part_no = $2`, transferID, partNo, afterID)
	return notFoundIfNone("mark transfer part posting", tag, err)
}

// RecordTransferPart stores a posted part's destination message id and
// returns how many parts of the transfer are still unposted. It locks the
// transfer row first, so that of several parts finishing at once exactly
// one sees 0 (and enqueues the verification) — the fan-in. Call it inside
// the transaction that completes the part's job: outside one, the lock ends
// with the statement and the guarantee with it.
func (db *DB) RecordTransferPart(ctx context.Context, transferID int64, partNo int, destMessageID int64) (remaining int, err error) {
	var status string
	if err := db.q.QueryRow(ctx, `SELECT status FROM transfers WHERE id = $1 FOR UPDATE`, transferID).Scan(&status); err != nil {
		return 0, wrap("record transfer part", err)
	}
	tag, err := db.q.Exec(ctx, `UPDATE transfer_parts SET dest_message_id = $3 WHERE transfer_id = $1 AND part_no = $2`,
		transferID, partNo, destMessageID)
	if err := notFoundIfNone("record transfer part", tag, err); err != nil {
		return 0, err
	}
	err = db.q.QueryRow(ctx, `SELECT count(*) FROM transfer_parts WHERE transfer_id = $1 AND dest_message_id IS NULL`,
		transferID).Scan(&remaining)
	return remaining, wrap("record transfer part", err)
}

// SaveUploadPoint records where an interrupted upload of a part stands
// (stamped now), replacing the point recorded before; fileID 0 forgets it.
func (db *DB) SaveUploadPoint(ctx context.Context, transferID int64, partNo int, fileID int64, partsDone int) error {
	sql := `UPDATE transfer_parts SET upload_file_id = $3, upload_parts_done = $4, upload_saved_at = now()
		WHERE transfer_id = $1 AND part_no = $2`
	args := []any{transferID, partNo, fileID, partsDone}
	if fileID == 0 {
		sql = `UPDATE transfer_parts SET upload_file_id = NULL, upload_parts_done = NULL, upload_saved_at = NULL
			WHERE transfer_id = $1 AND part_no = $2`
		args = args[:2]
	}
	tag, err := db.q.Exec(ctx, sql, args...)
	return notFoundIfNone("save upload point", tag, err)
}

// ClearTransferPart forgets a part's destination message (it vanished from
// the destination), so that it is posted again.
func (db *DB) ClearTransferPart(ctx context.Context, transferID int64, partNo int) error {
	tag, err := db.q.Exec(ctx, `UPDATE transfer_parts SET dest_message_id = NULL, dest_after_id = NULL
		WHERE transfer_id = $1 AND part_no = $2`, transferID, partNo)
	return notFoundIfNone("clear transfer part", tag, err)
}

// SetTransferStatus moves a transfer to status with an error message ("" when
// none).
func (db *DB) SetTransferStatus(ctx context.Context, id int64, status hoard.TransferStatus, errorMessage string) error {
	tag, err := db.q.Exec(ctx, `UPDATE transfers SET status = $2, error_message = $3, updated_at = now() WHERE id = $1`,
		id, string(status), errorMessage)
	return notFoundIfNone("set transfer status", tag, err)
}

// DeleteTransfer removes a transfer and its parts.
func (db *DB) DeleteTransfer(ctx context.Context, id int64) error {
	tag, err := db.q.Exec(ctx, `DELETE FROM transfers WHERE id = $1`, id)
	return notFoundIfNone("delete transfer", tag, err)
}

// FindNewestDestMessageID returns a destination message id below which no
// post of an unfinished publication lies: the newest first-part id of the
// indexed packages (an index lookup) or the newest posted part of a
// transfer; 0 when there is none.
func (db *DB) FindNewestDestMessageID(ctx context.Context, destChannelID int64) (int64, error) {
	var id int64
	err := db.q.QueryRow(ctx, `SELECT greatest(
			(SELECT coalesce(max(dest_message_id), 0) FROM packages WHERE dest_channel_id = $1),
			(SELECT coalesce(max(p.dest_message_id), 0) FROM transfer_parts p JOIN transfers t ON t.id = p.transfer_id
			 WHERE t.dest_channel_id = $1))`, destChannelID).Scan(&id)
	return id, wrap("find newest destination message", err)
}

// IsDestMessageTaken reports whether a destination message already belongs
// to a package, to a posted transfer part or to a repaired package's stale
// posts.
func (db *DB) IsDestMessageTaken(ctx context.Context, destChannelID, messageID int64) (bool, error) {
	var taken bool
	err := db.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM packages WHERE dest_channel_id = $1 AND dest_message_id <= $2
			AND $2 = ANY (dest_message_ids))
		OR EXISTS (SELECT 1 FROM transfer_parts p JOIN transfers t ON t.id = p.transfer_id
			WHERE t.dest_channel_id = $1 AND p.dest_message_id = $2)
		OR EXISTS (SELECT 1 FROM stale_destination_posts WHERE dest_channel_id = $1 AND message_id = $2)`,
		destChannelID, messageID).Scan(&taken)
	return taken, wrap("is destination message taken", err)
}

// ListUnreferencedDestMessages returns, of the destination messages ids,
// those that no package (any of its destination ids), no transfer part
// (in flight, or of a FAILED transfer a retry takes up) and no repair's
// stale posts (deleted once the repair is verified) point to, in
// ascending order. Both lookups are index scans per id.
func (db *DB) ListUnreferencedDestMessages(ctx context.Context, destChannelID int64, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.q.Query(ctx, `SELECT u.id FROM unnest($2::bigint[]) AS u(id)
		WHERE NOT EXISTS (SELECT 1 FROM packages p WHERE p.dest_message_ids @> ARRAY[u.id] AND p.dest_channel_id = $1)
		  AND NOT EXISTS (SELECT 1 FROM transfer_parts tp JOIN transfers t ON t.id = tp.transfer_id
			WHERE tp.dest_message_id = u.id AND t.dest_channel_id = $1)
		  AND NOT EXISTS (SELECT 1 FROM stale_destination_posts s WHERE s.dest_channel_id = $1 AND s.message_id = u.id)
		ORDER BY u.id`, destChannelID, ids)
	if err != nil {
		return nil, wrap("list unreferenced destination messages", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return out, wrap("list unreferenced destination messages", err)
}

// FindOldestPostingMark returns the smallest destination id recorded before
// a part of an unfinished transfer began posting and not yet recorded as
// posted (MarkTransferPartPosting): a message after it may be that part's
// post, not an orphan. ok is false when no part is posting.
func (db *DB) FindOldestPostingMark(ctx context.Context, destChannelID int64) (mark int64, ok bool, err error) {
	var m *int64
	err = db.q.QueryRow(ctx, `SELECT min(tp.dest_after_id) FROM transfer_parts tp JOIN transfers t ON t.id = tp.transfer_id
		WHERE t.dest_channel_id = $1 AND t.status IN ('PUBLISHING', 'VERIFYING')
		  AND tp.dest_message_id IS NULL AND tp.dest_after_id IS NOT NULL`, destChannelID).Scan(&m)
	if err != nil {
		return 0, false, wrap("find oldest posting mark", err)
	}
	if m == nil {
		return 0, false, nil
	}
	return *m, true, nil
}

// FindTransferForUpdate returns a transfer and locks its row until the
// transaction ends, so that a source claimed for its draft meanwhile
// (ClaimTransferSource) is either in what it returns or waits for the
// transaction. Run it inside a transaction.
func (db *DB) FindTransferForUpdate(ctx context.Context, id int64) (*hoard.Transfer, error) {
	return getOne[hoard.Transfer](ctx, db.q, "find transfer for update",
		`SELECT `+transferColumns+` FROM transfers WHERE id = $1 FOR UPDATE`, id)
}
