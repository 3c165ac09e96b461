package store

import (
	"context"
	"encoding/json"

	"github.com/hoard/hoard"
)

// StartRunForJob returns the ingestion run owned by the River job jobID,
// creating it (RUNNING) when the job has none yet, so a retried cycle job
// keeps its run. A RUNNING run of another job is left over from a cycle
// that can no longer finish (the cycle job is unique while unfinished); it
// is marked FAILED first. created reports a new run.
func (db *DB) StartRunForJob(ctx context.Context, trigger hoard.RunTrigger, jobID int64) (run *hoard.IngestionRun, created bool, err error) {
	run, err = db.FindRunByJob(ctx, jobID)
	if err == nil || hoard.ErrorCode(err) != hoard.ENOTFOUND {
		return run, false, err
	}
	if _, err := db.q.Exec(ctx, `UPDATE ingestion_runs SET status = 'FAILED', finished_at = now(), updated_at = now(),
		error_message = 'The cycle was interrupted before it finished.', current_activity = '', current_step = ''
		WHERE status = 'RUNNING' AND river_job_id IS DISTINCT FROM $1`, jobID); err != nil {
		return nil, false, wrap("fail stale runs", err)
	}
	run, err = getOne[hoard.IngestionRun](ctx, db.q, "create ingestion run",
		`INSERT INTO ingestion_runs (trigger, river_job_id) VALUES ($1, $2) RETURNING `+runColumns, string(trigger), jobID)
	return run, err == nil, err
}

// Dedup rules of SPEC rule 4, in order; the content-hash rule (d) is
// checked after the download.
const (
	DupRemoteUniqueID = "remote_unique_id"
	DupSourceMessage  = "source_message"
	DupNameAndSize    = "name_and_size"
	DupContentHash    = "content_hash"
)

// FindIngestDuplicate applies the dedup rules that need no bytes to a
// candidate set of a source channel: (a) a package of the same channel with
// one of the remote unique ids, (b) a package holding one of the source
// messages, (c) a package with the same file name and total size. Only
// packages published to a destination count: a package whose destination
// was cleared for repair is to be reprocessed. It returns the package and
// the rule that matched, or ENOTFOUND.
func (db *DB) FindIngestDuplicate(ctx context.Context, channelID int64, remoteIDs []string, messageIDs []int64, name string, size int64) (*hoard.Package, string, error) {
	checks := []struct {
		rule string
		sql  string
		args []any
	}{
		{DupRemoteUniqueID, `source_channel_id = $1 AND remote_unique_id = ANY($2)`, []any{channelID, nonNilStrings(remoteIDs)}},
		{DupSourceMessage, `source_channel_id = $1 AND (source_message_id = ANY($2) OR source_message_ids && $2)`, []any{channelID, nonNilInts(messageIDs)}},
		{DupNameAndSize, `file_name = $1 AND file_size = $2`, []any{name, size}},
	}
	for _, c := range checks {
		p, err := getOne[hoard.Package](ctx, db.q, "find duplicate by "+c.rule,
			`SELECT `+packageColumns+` FROM packages WHERE `+c.sql+` AND dest_channel_id IS NOT NULL ORDER BY id LIMIT 1`, c.args...)
		if err == nil {
			return p, c.rule, nil
		}
		if hoard.ErrorCode(err) != hoard.ENOTFOUND {
			return nil, "", err
		}
	}
	return nil, "", hoard.Errorf(hoard.ENOTFOUND, "no duplicate")
}

// FindPublishedByContentHash returns the published package (one with a
// destination) with the content hash: dedup rule (d). ENOTFOUND when none.
func (db *DB) FindPublishedByContentHash(ctx context.Context, hash string) (*hoard.Package, error) {
	return getOne[hoard.Package](ctx, db.q, "find published package by hash",
		`SELECT `+packageColumns+` FROM packages WHERE content_hash = $1 AND dest_channel_id IS NOT NULL`, hash)
}

// NewPackageEvent is the payload of the new_package notification.
type NewPackageEvent struct {
	PackageID int64 `json:"package_id"`
	ChannelID int64 `json:"channel_id,omitempty"`
}

// IndexPackage writes a published package with its file listing. A package
// row awaiting repair (no destination, same content hash or same source
// message) is completed in place, so its id, group, tags, creator and
// crowdfund links stay; otherwise a new row is created with p.Tags as
// given, new_package is notified (delivered on commit) and the package
// waits in the subscription notifier's inbox (enqueue NotifySubscribersArgs
// in the same transaction). The skipped record of the source message is
// deleted. A published package with the same content hash already present
// is ECONFLICT. Run it inside the transaction that completes the job.
func (db *DB) IndexPackage(ctx context.Context, p *hoard.Package, files []hoard.PackageFile) (created bool, err error) {
	p.PartCount = max(p.PartCount, 1)
	var existingID int64
	var hasDest bool
	err = db.q.QueryRow(ctx, `SELECT id, dest_channel_id IS NOT NULL FROM packages
		WHERE content_hash = $1 OR (source_channel_id = $2 AND source_message_id = $3 AND dest_channel_id IS NULL)
		ORDER BY (content_hash = $1) DESC NULLS LAST, id LIMIT 1 FOR UPDATE`,
		p.ContentHash, nullInt(p.SourceChannelID), p.SourceMessageID).Scan(&existingID, &hasDest)
	switch {
	case err == nil && hasDest:
		return false, hoard.Errorf(hoard.ECONFLICT, "index package: %s is already published as package %d", p.FileName, existingID)
	case err == nil:
		p.ID = existingID
		_, err = db.q.Exec(ctx, `UPDATE packages SET file_name = $2, file_size = $3, archive_type = $4, content_hash = $5,
			part_count = $6, creator = coalesce(creator, $7), source_channel_id = $8, source_message_id = $9,
			source_message_ids = $10, source_topic_id = $11, source_caption = $12, source_posted_at = $13,
			reply_to_message_id = $14, media_album_id = $15, remote_unique_id = $16, dest_channel_id = $17,
			dest_message_id = $18, dest_message_ids = $19, preview_data = coalesce($20, preview_data),
			preview_msg_id = coalesce($21, preview_msg_id), inspection_note = $22, ingestion_run_id = coalesce($23, ingestion_run_id),
			updated_at = now() WHERE id = $1`,
			p.ID, p.FileName, p.FileSize, string(p.ArchiveType), p.ContentHash, p.PartCount, nullString(p.Creator),
			nullInt(p.SourceChannelID), nullInt(p.SourceMessageID), nonNilInts(p.SourceMessageIDs), nullInt(p.SourceTopicID),
			nullString(p.SourceCaption), nullTime(p.SourcePostedAt), nullInt(p.ReplyToMessageID), nullInt(p.MediaAlbumID),
			nullString(p.RemoteUniqueID), nullInt(p.DestChannelID), nullInt(p.DestMessageID), nonNilInts(p.DestMessageIDs),
			p.PreviewData, nullInt(p.PreviewMsgID), p.InspectionNote, nullInt(p.IngestionRunID))
		if err != nil {
			return false, wrap("index package: update", err)
		}
	case isNoRows(err):
		if err := db.CreatePackage(ctx, p); err != nil {
			return false, err
		}
		created = true
	default:
		return false, wrap("index package", err)
	}
	if err := db.ReplacePackageFiles(ctx, p.ID, files); err != nil {
		return false, err
	}
	if p.SourceChannelID != 0 {
		if _, err := db.q.Exec(ctx, `DELETE FROM skipped_packages WHERE source_channel_id = $1 AND source_message_id = $2`,
			p.SourceChannelID, p.SourceMessageID); err != nil {
			return false, wrap("index package: delete skipped record", err)
		}
	}
	if created {
		payload, _ := json.Marshal(NewPackageEvent{PackageID: p.ID, ChannelID: p.SourceChannelID})
		if err := db.Notify(ctx, "new_package", string(payload)); err != nil {
			return false, err
		}
		if err := db.queueSubscriberCheck(ctx, p.ID); err != nil {
			return false, err
		}
	}
	return created, nil
}

// RewindTopicWatermark moves one topic's watermark back to just below
// messageID (never forward), so the message is scanned again.
func (db *DB) RewindTopicWatermark(ctx context.Context, mapID, topicID, messageID int64) error {
	_, err := db.q.Exec(ctx, `UPDATE topic_progress SET last_processed_message_id = least(last_processed_message_id, $3),
		updated_at = now() WHERE account_channel_map_id = $1 AND topic_id = $2`, mapID, topicID, max(messageID-1, 0))
	return wrap("rewind topic watermark", err)
}

// FindWriterMap returns the WRITER map of the destination channel, preferring
// the given account (so that a source message can be re-sent by the account
// that reads it); ENOTFOUND when the destination has no signed-in writer.
func (db *DB) FindWriterMap(ctx context.Context, destChannelID, preferAccountID int64) (*hoard.ChannelMap, error) {
	return getOne[hoard.ChannelMap](ctx, db.q, "find destination writer", `
		SELECT `+prefixed("m.", mapColumns)+` FROM account_channel_maps m
		JOIN messenger_accounts a ON a.id = m.account_id
		WHERE m.channel_id = $1 AND m.role = 'WRITER' AND a.is_active AND a.auth_state = 'AUTHENTICATED'
		ORDER BY (m.account_id = $2) DESC, m.account_id LIMIT 1`, destChannelID, preferAccountID)
}

// CheckPublishTarget reports what keeps hoard from publishing to the
// destination: EINVALID, naming what to set up, when no destination channel
// is chosen or no signed-in account posts to it (FindWriterMap); nil when
// publishing can start.
func (db *DB) CheckPublishTarget(ctx context.Context) error {
	dest, err := db.FindDestinationChannel(ctx)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return hoard.Errorf(hoard.EINVALID, "No destination channel is set up: choose or create one on the Messaging page first.")
	}
	if err != nil {
		return err
	}
	_, err = db.FindWriterMap(ctx, dest.ID, 0)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return hoard.Errorf(hoard.EINVALID, "No signed-in account posts to the destination channel %q: "+
			"sign in an account that is a writer there on the Messaging page first.", dest.Title)
	}
	return err
}

// countableTables are the tables CountRows may count.
var countableTables = map[string]bool{"packages": true, "package_groups": true, "package_files": true,
	"skipped_packages": true, "system_notifications": true, "transfers": true}

// CountRows counts the rows of one of the catalog's tables (packages,
// package_groups, package_files, skipped_packages, system_notifications,
// transfers); other names are EINVALID.
func (db *DB) CountRows(ctx context.Context, table string) (int64, error) {
	if !countableTables[table] {
		return 0, hoard.Errorf(hoard.EINVALID, "count rows: %q is not a countable table", table)
	}
	var n int64
	err := db.q.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n)
	return n, wrap("count "+table, err)
}

// Of the same content posted in several places, the package's source is the
// earliest post (hoard.PackageSource.Before), whatever order the copies are
// ingested in, by several jobs and processes at once or across a kill -9:
// every copy found to be a duplicate is compared with the package (or, while
// it is being published, with its transfer's draft) under that row's lock,
// in the transaction that completes the duplicate's job, and an earlier
// copy takes the source's place. The row lock serialises concurrent claims,
// so the source ends as the earliest of all copies, and a claim either
// commits with its job's completion or not at all. Nothing else of the
// package changes: its bytes, destination posts, listing and preview are the
// same content's.

// ClaimPackageSource makes src the source of package id when src was
// posted before the package's own source: the source fields, file name and
// creator become src's, and the former channel's category tag gives way to
// src.Tag. It reports whether the source changed. A package without a
// source channel (a manual upload) keeps its own. ENOTFOUND when the
// package does not exist. Run it in the transaction that completes the
// duplicate's job: the package row stays locked until that commits.
func (db *DB) ClaimPackageSource(ctx context.Context, id int64, src hoard.PackageSource) (bool, error) {
	var cur hoard.PackageSource
	var tags []string
	err := db.q.QueryRow(ctx, `SELECT coalesce(p.source_channel_id, 0), coalesce(p.source_message_id, 0),
			coalesce(p.source_posted_at, '0001-01-01 00:00:00+00'), p.tags, coalesce(c.category, '')
		FROM packages p LEFT JOIN messenger_channels c ON c.id = p.source_channel_id
		WHERE p.id = $1 FOR UPDATE OF p`, id).Scan(&cur.ChannelID, &cur.MessageID, &cur.PostedAt, &tags, &cur.Tag)
	if err != nil {
		return false, wrap("claim package source", err)
	}
	if !src.Before(cur) {
		return false, nil
	}
	_, err = db.q.Exec(ctx, `UPDATE packages SET source_channel_id = $2, source_message_id = $3, source_message_ids = $4,
			source_topic_id = $5, source_caption = $6, source_posted_at = $7, reply_to_message_id = $8, media_album_id = $9,
			remote_unique_id = $10, file_name = $11, creator = $12, tags = $13, updated_at = now()
		WHERE id = $1`,
		id, src.ChannelID, nullInt(src.MessageID), nonNilInts(src.MessageIDs), nullInt(src.TopicID), nullString(src.Caption),
		nullTime(src.PostedAt), nullInt(src.ReplyToMessageID), nullInt(src.MediaAlbumID), nullString(src.RemoteUniqueID),
		src.FileName, nullString(src.Creator), nonNilStrings(hoard.SwapTag(tags, cur.Tag, src.Tag)))
	if err != nil {
		return false, wrap("claim package source", err)
	}
	return true, nil
}

// ClaimTransferSource is ClaimPackageSource for content still being
// published: it makes src the source of the draft of the unfinished
// transfer of contentHash (another source's) when src was posted before
// the draft's source. The verification indexes the draft as it is when it
// locks the transfer (FindTransferForUpdate), so a claim that commits
// first is in the package, and one that waits for the lock finds the
// transfer gone and claims the package. ENOTFOUND when no such transfer is
// in flight.
func (db *DB) ClaimTransferSource(ctx context.Context, contentHash string, src hoard.PackageSource) (bool, error) {
	t, err := getOne[hoard.Transfer](ctx, db.q, "claim transfer source", `SELECT `+transferColumns+` FROM transfers
		WHERE content_hash = $1 AND status <> 'FAILED'
		  AND NOT (source_channel_id IS NOT DISTINCT FROM $2 AND source_message_id IS NOT DISTINCT FROM $3)
		ORDER BY id LIMIT 1 FOR UPDATE`, contentHash, nullInt(src.ChannelID), nullInt(src.MessageID))
	if err != nil {
		return false, err
	}
	var oldTag string
	if t.Draft.SourceChannelID != 0 {
		err := db.q.QueryRow(ctx, `SELECT coalesce(category, '') FROM messenger_channels WHERE id = $1`, t.Draft.SourceChannelID).Scan(&oldTag)
		if err != nil && !isNoRows(err) {
			return false, wrap("claim transfer source: category", err)
		}
	}
	if !src.Before(t.Draft.Source(oldTag)) {
		return false, nil
	}
	draft := t.Draft
	draft.SetSource(src)
	draft.Tags = hoard.SwapTag(draft.Tags, oldTag, src.Tag)
	_, err = db.q.Exec(ctx, `UPDATE transfers SET draft = $2, updated_at = now() WHERE id = $1`, t.ID, draft)
	if err != nil {
		return false, wrap("claim transfer source", err)
	}
	return true, nil
}
