package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hoard/hoard"
	"github.com/jackc/pgx/v5"
)

const sendColumns = `r.id, r.user_id, r.package_id, r.platform_user_id, coalesce(r.requested_by, 0) AS requested_by,
	coalesce(r.batch_id, 0) AS batch_id, r.status, r.error_message, r.parts_total, r.parts_sent,
	r.created_at, r.updated_at, r.sent_at`

// CreateBotSendRequests queues deliveries of packages to a user's linked
// account, each on its own (no batch): one PENDING request per package that
// is published (has destination messages) and not already pending or
// sending for that user, in the order of packageIDs. It returns the new
// requests; packages skipped for either reason are not an error. It
// inserts no jobs: QueueBotSends does both.
func (db *DB) CreateBotSendRequests(ctx context.Context, userID, requestedBy, platformUserID int64, packageIDs []int64) ([]hoard.BotSendRequest, error) {
	return db.createSendRequests(ctx, userID, requestedBy, platformUserID, 0, packageIDs)
}

func (db *DB) createSendRequests(ctx context.Context, userID, requestedBy, platformUserID, batchID int64, packageIDs []int64) ([]hoard.BotSendRequest, error) {
	return getAll[hoard.BotSendRequest](ctx, db.q, "queue bot sends", `
		WITH r AS (
			INSERT INTO bot_send_requests (user_id, package_id, platform_user_id, requested_by, batch_id, parts_total)
			SELECT $1, p.id, $3, $2, $5, cardinality(p.dest_message_ids)
			FROM unnest($4::bigint[]) WITH ORDINALITY AS want(id, pos)
			JOIN packages p ON p.id = want.id
			WHERE cardinality(p.dest_message_ids) > 0 AND p.dest_channel_id IS NOT NULL
			  AND NOT EXISTS (SELECT 1 FROM bot_send_requests q WHERE q.user_id = $1 AND q.package_id = p.id
			                  AND q.status IN ('PENDING', 'SENDING'))
			ORDER BY want.pos
			RETURNING *)
		SELECT `+sendColumns+` FROM r ORDER BY r.id`,
		userID, nullInt(requestedBy), platformUserID, distinctIDs(packageIDs), nullInt(batchID))
}

// distinctIDs keeps the first occurrence of each id, in order.
func distinctIDs(ids []int64) []int64 {
	seen := make(map[int64]bool, len(ids))
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// SendOrder is a delivery someone asked for: packages for a user's linked
// account (PlatformUserID), in order.
type SendOrder struct {
	UserID         int64
	RequestedBy    int64 // 0: the bot, on the user's own command
	PlatformUserID int64
	PackageIDs     []int64
	// Title names the delivery (a group, a crowdfund record): a header
	// message with it precedes the packages. An order of several packages
	// or with a title is one batch, delivered in order by one job.
	Title string
}

// maxBatchTitle is the longest batch title kept (the CHECK allows 600).
const maxBatchTitle = 500

// QueueBotSends queues an order in one transaction: its requests (see
// CreateBotSendRequests for which packages are skipped), the batch that
// keeps them in order when there are several or a title, the bot_send jobs
// (enqueue inserts them with the transaction it is given, see
// queue.InsertBotSends) and the bot_send notification. It returns the new requests; none is not an error.
func (db *DB) QueueBotSends(ctx context.Context, o SendOrder, enqueue func(tx pgx.Tx, jobs []hoard.BotSendArgs) error) ([]hoard.BotSendRequest, error) {
	var reqs []hoard.BotSendRequest
	err := db.InTx(ctx, func(tx *DB) error {
		var batchID int64
		if len(o.PackageIDs) > 1 || o.Title != "" {
			err := tx.q.QueryRow(ctx, `INSERT INTO bot_send_batches (user_id, platform_user_id, title) VALUES ($1, $2, $3) RETURNING id`,
				o.UserID, o.PlatformUserID, truncateRunes(o.Title, maxBatchTitle)).Scan(&batchID)
			if err != nil {
				return wrap("queue bot sends: batch", err)
			}
		}
		var err error
		if reqs, err = tx.createSendRequests(ctx, o.UserID, o.RequestedBy, o.PlatformUserID, batchID, o.PackageIDs); err != nil {
			return err
		}
		if len(reqs) == 0 {
			return errNothingQueued
		}
		ids := make([]int64, len(reqs))
		jobs := make([]hoard.BotSendArgs, 0, len(reqs))
		for i, r := range reqs {
			ids[i] = r.ID
			if batchID == 0 {
				jobs = append(jobs, hoard.BotSendArgs{RequestID: r.ID})
			}
		}
		if batchID != 0 {
			jobs = append(jobs, hoard.BotSendArgs{BatchID: batchID})
		}
		if err := enqueue(tx.Tx(), jobs); err != nil {
			return fmt.Errorf("queue bot sends: %w", err)
		}
		payload, _ := json.Marshal(map[string]any{"request_ids": ids})
		return tx.Notify(ctx, "bot_send", string(payload))
	})
	if err == errNothingQueued {
		return nil, nil
	}
	return reqs, err
}

// errNothingQueued rolls back an order that queued no request (and so
// needs no batch row).
var errNothingQueued = hoard.Errorf(hoard.ECONFLICT, "nothing to send")

// FindBotSendRequest returns a send request.
func (db *DB) FindBotSendRequest(ctx context.Context, id int64) (*hoard.BotSendRequest, error) {
	return getOne[hoard.BotSendRequest](ctx, db.q, "find bot send", `SELECT `+sendColumns+` FROM bot_send_requests r WHERE r.id = $1`, id)
}

// ListBotSendRequests returns the newest requests first (getBotSendHistory)
// with the user's email and the package's file name; userID 0 lists all.
func (db *DB) ListBotSendRequests(ctx context.Context, userID int64, limit int) ([]hoard.BotSendRequest, error) {
	if limit <= 0 || limit > 500 {
		limit = 50
	}
	return getAll[hoard.BotSendRequest](ctx, db.q, "list bot sends", `
		SELECT `+sendColumns+`, u.email AS user_email, p.file_name AS package_name
		FROM bot_send_requests r JOIN users u ON u.id = r.user_id JOIN packages p ON p.id = r.package_id
		WHERE $1::bigint = 0 OR r.user_id = $1
		ORDER BY r.id DESC LIMIT $2`, userID, limit)
}

// SetBotSendStatus moves a request to a status with an error message ("" on
// success); SENT stamps sent_at and counts every part sent.
func (db *DB) SetBotSendStatus(ctx context.Context, id int64, status hoard.SendStatus, errorMessage string) error {
	tag, err := db.q.Exec(ctx, `UPDATE bot_send_requests SET status = $2, error_message = $3, updated_at = now(),
		parts_sent = CASE WHEN $2 = 'SENT' THEN parts_total ELSE parts_sent END,
		sent_at = CASE WHEN $2 = 'SENT' THEN now() ELSE sent_at END WHERE id = $1`, id, string(status), errorMessage)
	return notFoundIfNone("set bot send status", tag, err)
}

// FailBotSend ends one unfinished request FAILED with a message and the
// number of its parts that did arrive (not necessarily the leading ones),
// in one write, so that no retry can resume it; a request already final
// is left as it is.
func (db *DB) FailBotSend(ctx context.Context, id int64, partsSent int, errorMessage string) error {
	_, err := db.q.Exec(ctx, `UPDATE bot_send_requests SET status = 'FAILED', error_message = $3, parts_sent = $2, updated_at = now()
		WHERE id = $1 AND status IN ('PENDING', 'SENDING')`, id, partsSent, errorMessage)
	return wrap("fail bot send", err)
}

// SetBotSendProgress records how many of a request's parts are delivered.
func (db *DB) SetBotSendProgress(ctx context.Context, id int64, partsSent int) error {
	tag, err := db.q.Exec(ctx, `UPDATE bot_send_requests SET parts_sent = $2, updated_at = now() WHERE id = $1`, id, partsSent)
	return notFoundIfNone("set bot send progress", tag, err)
}

// BotDelivery is a request as the bot delivers it: the request and where
// the package's parts are. DestChannelPlatformID is 0 when the package is
// not published (any more: a repair cleared it).
type BotDelivery struct {
	Request               hoard.BotSendRequest
	FileName              string
	DestChannelPlatformID int64
	DestMessageIDs        []int64
}

// BotSendBatch is a batch's header data.
type BotSendBatch struct {
	ID             int64
	UserID         int64
	PlatformUserID int64
	Title          string
}

const deliveryColumns = sendColumns + `, p.file_name, coalesce(c.platform_id, 0) AS dest_channel_platform_id, p.dest_message_ids`

// deliveryRow is a BotDelivery as scanned.
type deliveryRow struct {
	hoard.BotSendRequest
	FileName              string
	DestChannelPlatformID int64
	DestMessageIDs        []int64
}

func (r deliveryRow) delivery() BotDelivery {
	return BotDelivery{Request: r.BotSendRequest, FileName: r.FileName, DestChannelPlatformID: r.DestChannelPlatformID,
		DestMessageIDs: r.DestMessageIDs}
}

// StartBotSends moves requests from PENDING to SENDING and returns what
// delivering them needs, in delivery order: the one request id, or every
// request of batch batchID. Final requests come back as they are. The
// package's parts are read now: a package re-published since the request
// was made is delivered from where it is now.
func (db *DB) StartBotSends(ctx context.Context, requestID, batchID int64) ([]BotDelivery, error) {
	rows, err := getAll[deliveryRow](ctx, db.q, "start bot sends", `
		WITH started AS (
			UPDATE bot_send_requests SET status = 'SENDING', updated_at = now()
			WHERE status = 'PENDING' AND (id = $1 OR batch_id = $2) RETURNING id)
		SELECT `+deliveryColumns+` FROM bot_send_requests r
		JOIN packages p ON p.id = r.package_id
		LEFT JOIN messenger_channels c ON c.id = p.dest_channel_id
		WHERE r.id = $1 OR r.batch_id = $2
		ORDER BY r.id`, requestID, batchID)
	if err != nil {
		return nil, err
	}
	out := make([]BotDelivery, len(rows))
	for i, r := range rows {
		if !r.Status.Final() {
			r.Status = hoard.SendSending
		}
		out[i] = r.delivery()
	}
	return out, nil
}

// FindBotSendBatch returns a batch.
func (db *DB) FindBotSendBatch(ctx context.Context, id int64) (*BotSendBatch, error) {
	return getOne[BotSendBatch](ctx, db.q, "find bot send batch",
		`SELECT id, user_id, platform_user_id, title FROM bot_send_batches WHERE id = $1`, id)
}

// FailBotSends marks every unfinished request among ids FAILED with a
// message and returns how many it marked.
func (db *DB) FailBotSends(ctx context.Context, ids []int64, errorMessage string) (int64, error) {
	tag, err := db.q.Exec(ctx, `UPDATE bot_send_requests SET status = 'FAILED', error_message = $2, updated_at = now()
		WHERE id = ANY($1) AND status IN ('PENDING', 'SENDING')`, ids, errorMessage)
	if err != nil {
		return 0, wrap("fail bot sends", err)
	}
	return tag.RowsAffected(), nil
}

// IsLinkedTo reports whether platformUserID is (still) the messenger
// account linked to userID.
func (db *DB) IsLinkedTo(ctx context.Context, userID, platformUserID int64) (bool, error) {
	var ok bool
	err := db.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM messenger_links WHERE user_id = $1 AND platform_user_id = $2)`,
		userID, platformUserID).Scan(&ok)
	return ok, wrap("check messenger link", err)
}

// ListGroupDeliveryOrder returns the ids of a group's packages in the order
// a group send delivers them: as they were posted, oldest first. ENOTFOUND
// when the group does not exist.
func (db *DB) ListGroupDeliveryOrder(ctx context.Context, groupID int64) ([]int64, error) {
	rows, err := db.q.Query(ctx, `SELECT p.id FROM package_groups g JOIN packages p ON p.package_group_id = g.id
		WHERE g.id = $1 ORDER BY coalesce(p.source_posted_at, p.created_at), p.file_name, p.id`, groupID)
	if err != nil {
		return nil, wrap("list group delivery order", err)
	}
	ids, err := collectIDs(rows)
	if err != nil {
		return nil, wrap("list group delivery order", err)
	}
	if len(ids) == 0 {
		if _, err := db.FindGroupByID(ctx, groupID); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// CountQueuedBotSends counts the bot's deliveries waiting or in progress
// (unfinished bot_send jobs).
func (db *DB) CountQueuedBotSends(ctx context.Context) (int, error) {
	return db.CountUnfinishedJobs(ctx, hoard.BotSendArgs{}.Kind())
}
