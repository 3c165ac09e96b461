package store

import (
	"context"

	"github.com/hoard/hoard"
)

const mapColumns = `id, account_id, channel_id, access_hash, role, last_processed_message_id, last_scanned_at,
	last_scan_found_archives, consecutive_empty_scans, partial_scan_found, created_at`

const topicColumns = `id, account_channel_map_id, topic_id, topic_name, is_general, fetch_enabled, last_processed_message_id,
	last_scanned_at, last_scan_found_archives, consecutive_empty_scans, partial_scan_found, created_at, updated_at`

// UpsertChannelMap links an account to a channel with its access hash and
// role; an existing link gets the new hash and role and keeps its watermark.
func (db *DB) UpsertChannelMap(ctx context.Context, accountID, channelID, accessHash int64, role hoard.MapRole) (*hoard.ChannelMap, error) {
	return getOne[hoard.ChannelMap](ctx, db.q, "upsert channel map", `
		INSERT INTO account_channel_maps (account_id, channel_id, access_hash, role) VALUES ($1, $2, $3, $4)
		ON CONFLICT (account_id, channel_id) DO UPDATE SET access_hash = EXCLUDED.access_hash, role = EXCLUDED.role
		RETURNING `+mapColumns, accountID, channelID, accessHash, string(role))
}

// FindChannelMap returns a channel map.
func (db *DB) FindChannelMap(ctx context.Context, id int64) (*hoard.ChannelMap, error) {
	return getOne[hoard.ChannelMap](ctx, db.q, "find channel map", `SELECT `+mapColumns+` FROM account_channel_maps WHERE id = $1`, id)
}

// ListChannelMaps returns the maps of one channel.
func (db *DB) ListChannelMaps(ctx context.Context, channelID int64) ([]hoard.ChannelMap, error) {
	return getAll[hoard.ChannelMap](ctx, db.q, "list channel maps",
		`SELECT `+mapColumns+` FROM account_channel_maps WHERE channel_id = $1 ORDER BY id`, channelID)
}

// ListScanMaps returns the maps an ingestion cycle scans: READER maps of
// active source channels whose account is active and signed in, one per
// channel (the oldest account wins), so no channel is downloaded twice.
func (db *DB) ListScanMaps(ctx context.Context) ([]hoard.ChannelMap, error) {
	return getAll[hoard.ChannelMap](ctx, db.q, "list scan maps", `
		SELECT DISTINCT ON (m.channel_id) `+prefixed("m.", mapColumns)+`
		FROM account_channel_maps m
		JOIN messenger_channels c ON c.id = m.channel_id
		JOIN messenger_accounts a ON a.id = m.account_id
		WHERE m.role = 'READER' AND c.kind = 'SOURCE' AND c.is_active AND a.is_active AND a.auth_state = 'AUTHENTICATED'
		ORDER BY m.channel_id, m.account_id`)
}

// AdvanceWatermark moves a map's watermark forward to messageID; it never
// moves it back.
func (db *DB) AdvanceWatermark(ctx context.Context, mapID, messageID int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE account_channel_maps SET last_processed_message_id = greatest(last_processed_message_id, $2)
		WHERE id = $1`, mapID, messageID)
	return notFoundIfNone("advance watermark", tag, err)
}

// RewindWatermarks moves the watermark of every map of a channel (and of
// each of its topics) back to just below messageID, so that the message is
// scanned again. Watermarks already below it stay.
func (db *DB) RewindWatermarks(ctx context.Context, channelID, messageID int64) error {
	if _, err := db.q.Exec(ctx, `UPDATE account_channel_maps SET last_processed_message_id = least(last_processed_message_id, $2)
		WHERE channel_id = $1`, channelID, max(messageID-1, 0)); err != nil {
		return wrap("rewind watermarks", err)
	}
	_, err := db.q.Exec(ctx, `UPDATE topic_progress SET last_processed_message_id = least(last_processed_message_id, $2), updated_at = now()
		WHERE account_channel_map_id IN (SELECT id FROM account_channel_maps WHERE channel_id = $1)`, channelID, max(messageID-1, 0))
	return wrap("rewind watermarks", err)
}

// ResetChannelProgress sets every watermark of a channel back to the start
// (a full rescan) and clears its scan state.
func (db *DB) ResetChannelProgress(ctx context.Context, channelID int64) error {
	if _, err := db.q.Exec(ctx, `UPDATE account_channel_maps SET last_processed_message_id = 0,
		last_scanned_at = 'epoch', last_scan_found_archives = true, consecutive_empty_scans = 0, partial_scan_found = false
		WHERE channel_id = $1`, channelID); err != nil {
		return wrap("reset channel progress", err)
	}
	_, err := db.q.Exec(ctx, `UPDATE topic_progress SET last_processed_message_id = 0, last_scanned_at = 'epoch',
		last_scan_found_archives = true, consecutive_empty_scans = 0, partial_scan_found = false, updated_at = now()
		WHERE account_channel_map_id IN (SELECT id FROM account_channel_maps WHERE channel_id = $1)`, channelID)
	return wrap("reset channel progress", err)
}

// SetMapScanState records the outcome of a scan of a whole channel.
func (db *DB) SetMapScanState(ctx context.Context, mapID int64, s hoard.ScanState) error {
	tag, err := db.q.Exec(ctx, `UPDATE account_channel_maps SET last_scanned_at = $2, last_scan_found_archives = $3,
		consecutive_empty_scans = $4, partial_scan_found = $5 WHERE id = $1`,
		mapID, s.LastScannedAt, s.LastScanFoundArchives, s.ConsecutiveEmptyScans, s.PartialScanFound)
	return notFoundIfNone("set map scan state", tag, err)
}

// MarkMapPartialScanFound records that a page of a scan of a whole
// channel, not finished yet, queued archives (ScanState.PartialScanFound).
func (db *DB) MarkMapPartialScanFound(ctx context.Context, mapID int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE account_channel_maps SET partial_scan_found = true WHERE id = $1`, mapID)
	return notFoundIfNone("mark partial scan found", tag, err)
}

// UpsertTopic records a forum topic under a map (its name may change) and
// returns its progress row; a new topic starts enabled.
func (db *DB) UpsertTopic(ctx context.Context, mapID, topicID int64, name string, isGeneral bool) (*hoard.TopicProgress, error) {
	return getOne[hoard.TopicProgress](ctx, db.q, "upsert topic", `
		INSERT INTO topic_progress (account_channel_map_id, topic_id, topic_name, is_general) VALUES ($1, $2, $3, $4)
		ON CONFLICT (account_channel_map_id, topic_id) DO UPDATE SET topic_name = EXCLUDED.topic_name,
			is_general = EXCLUDED.is_general, updated_at = now()
		RETURNING `+topicColumns, mapID, topicID, name, isGeneral)
}

// FindTopic returns the progress of one topic.
func (db *DB) FindTopic(ctx context.Context, mapID, topicID int64) (*hoard.TopicProgress, error) {
	return getOne[hoard.TopicProgress](ctx, db.q, "find topic",
		`SELECT `+topicColumns+` FROM topic_progress WHERE account_channel_map_id = $1 AND topic_id = $2`, mapID, topicID)
}

// ListTopics returns the topics of a map, General first, then by name.
func (db *DB) ListTopics(ctx context.Context, mapID int64) ([]hoard.TopicProgress, error) {
	return getAll[hoard.TopicProgress](ctx, db.q, "list topics",
		`SELECT `+topicColumns+` FROM topic_progress WHERE account_channel_map_id = $1
		 ORDER BY is_general DESC, lower(topic_name), topic_id`, mapID)
}

// IsTopicFetchEnabled reads a topic's fetch flag live; a topic without a row
// is enabled.
func (db *DB) IsTopicFetchEnabled(ctx context.Context, mapID, topicID int64) (bool, error) {
	enabled := true
	err := db.q.QueryRow(ctx, `SELECT coalesce((SELECT fetch_enabled FROM topic_progress
		WHERE account_channel_map_id = $1 AND topic_id = $2), true)`, mapID, topicID).Scan(&enabled)
	return enabled, wrap("read topic fetch flag", err)
}

// SetTopicFetchEnabled turns fetching of one topic on or off, creating its
// row when absent (disableActiveTopic).
func (db *DB) SetTopicFetchEnabled(ctx context.Context, mapID, topicID int64, enabled bool) error {
	_, err := db.q.Exec(ctx, `
		INSERT INTO topic_progress (account_channel_map_id, topic_id, fetch_enabled) VALUES ($1, $2, $3)
		ON CONFLICT (account_channel_map_id, topic_id) DO UPDATE SET fetch_enabled = EXCLUDED.fetch_enabled, updated_at = now()`,
		mapID, topicID, enabled)
	return wrap("set topic fetch flag", err)
}

// AdvanceTopicWatermark moves a topic's watermark forward to messageID.
func (db *DB) AdvanceTopicWatermark(ctx context.Context, mapID, topicID, messageID int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE topic_progress SET last_processed_message_id = greatest(last_processed_message_id, $3),
		updated_at = now() WHERE account_channel_map_id = $1 AND topic_id = $2`, mapID, topicID, messageID)
	return notFoundIfNone("advance topic watermark", tag, err)
}

// SetTopicScanState records the outcome of a scan of one topic.
func (db *DB) SetTopicScanState(ctx context.Context, mapID, topicID int64, s hoard.ScanState) error {
	tag, err := db.q.Exec(ctx, `UPDATE topic_progress SET last_scanned_at = $3, last_scan_found_archives = $4,
		consecutive_empty_scans = $5, partial_scan_found = $6, updated_at = now() WHERE account_channel_map_id = $1 AND topic_id = $2`,
		mapID, topicID, s.LastScannedAt, s.LastScanFoundArchives, s.ConsecutiveEmptyScans, s.PartialScanFound)
	return notFoundIfNone("set topic scan state", tag, err)
}

// MarkTopicPartialScanFound records that a page of a scan of one topic,
// not finished yet, queued archives (ScanState.PartialScanFound).
func (db *DB) MarkTopicPartialScanFound(ctx context.Context, mapID, topicID int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE topic_progress SET partial_scan_found = true, updated_at = now()
		WHERE account_channel_map_id = $1 AND topic_id = $2`, mapID, topicID)
	return notFoundIfNone("mark topic partial scan found", tag, err)
}

// ListChannelTopics returns the topics of a channel as its scanning (READER)
// maps know them, one row per topic (the oldest map wins), General first.
func (db *DB) ListChannelTopics(ctx context.Context, channelID int64) ([]hoard.TopicProgress, error) {
	return getAll[hoard.TopicProgress](ctx, db.q, "list channel topics", `
		SELECT * FROM (
			SELECT DISTINCT ON (t.topic_id) `+prefixed("t.", topicColumns)+`
			FROM topic_progress t JOIN account_channel_maps m ON m.id = t.account_channel_map_id
			WHERE m.channel_id = $1 AND m.role = 'READER'
			ORDER BY t.topic_id, m.id
		) x ORDER BY is_general DESC, lower(topic_name), topic_id`, channelID)
}

// SetChannelTopicFetchEnabled turns fetching of one topic on or off for
// every scanning map of a channel, creating rows where absent, and reports
// how many maps it touched (0: the channel has no scanning map).
func (db *DB) SetChannelTopicFetchEnabled(ctx context.Context, channelID, topicID int64, enabled bool) (int64, error) {
	tag, err := db.q.Exec(ctx, `
		INSERT INTO topic_progress (account_channel_map_id, topic_id, fetch_enabled)
		SELECT id, $2, $3 FROM account_channel_maps WHERE channel_id = $1 AND role = 'READER'
		ON CONFLICT (account_channel_map_id, topic_id) DO UPDATE SET fetch_enabled = EXCLUDED.fetch_enabled, updated_at = now()`,
		channelID, topicID, enabled)
	if err != nil {
		return 0, wrap("set channel topic fetch flag", err)
	}
	return tag.RowsAffected(), nil
}
