WITH t AS MATERIALIZED (SELECT unnest(@word_ids::bigint[]) AS id),
f AS MATERIALIZED (SELECT NULL::bigint AS id WHERE false),
candidates AS MATERIALIZED (SELECT c.id, c.rank FROM unnest(@word_ids::bigint[], @word_ranks::real[]) AS c(id, rank)),
r AS (SELECT c.id AS row_key, c.* FROM candidates c)
SELECT r.row_key, r.rank, lower(p.file_name) AS sort_name,
	(SELECT count(*) FROM t) >= 200 OR (SELECT count(*) FROM f) >= @paths_want::int AS capped,
	(SELECT count(*) FROM t) >= 200 AS words_capped,
	(SELECT count(*) FROM r) AS total_rows,
	p.id, p.file_name, p.file_size, p.archive_type, coalesce(p.content_hash, '') AS content_hash, p.part_count, p.file_count, coalesce(p.creator, '') AS creator, p.tags, coalesce(p.source_channel_id, 0) AS source_channel_id, coalesce(p.source_message_id, 0) AS source_message_id, p.source_message_ids, coalesce(p.source_topic_id, 0) AS source_topic_id, coalesce(p.source_caption, '') AS source_caption, coalesce(p.source_posted_at, '0001-01-01 00:00:00+00') AS source_posted_at, coalesce(p.reply_to_message_id, 0) AS reply_to_message_id, coalesce(p.media_album_id, 0) AS media_album_id, coalesce(p.remote_unique_id, '') AS remote_unique_id, coalesce(p.dest_channel_id, 0) AS dest_channel_id, coalesce(p.dest_message_id, 0) AS dest_message_id, p.dest_message_ids, coalesce(p.preview_msg_id, 0) AS preview_msg_id, p.has_preview, p.inspection_note, coalesce(p.package_group_id, 0) AS package_group_id, coalesce(p.ingestion_run_id, 0) AS ingestion_run_id, p.created_at, p.updated_at,
	coalesce(g.name, '') AS group_name,
	CASE WHEN g.id IS NULL THEN 0 ELSE (SELECT count(*) FROM packages m WHERE m.package_group_id = g.id) END AS group_members
FROM (SELECT * FROM r WHERE (@after_id::bigint IS NULL OR (r.rank, r.row_key) < (@after_key::real, @after_id::bigint)) ORDER BY r.rank DESC, r.row_key DESC LIMIT @limit::int) r
JOIN packages p ON p.id = r.id
LEFT JOIN package_groups g ON g.id = p.package_group_id AND r.row_key < 0
ORDER BY r.rank DESC, r.row_key DESC
