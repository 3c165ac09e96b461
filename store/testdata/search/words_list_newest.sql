SELECT CASE WHEN @group_rows::bool THEN coalesce(-p.package_group_id, p.id) ELSE p.id END AS row_key,
	0::real AS rank, false AS capped, 0::bigint AS total_rows, lower(p.file_name) AS sort_name,
	p.id, p.file_name, p.file_size, p.archive_type, coalesce(p.content_hash, '') AS content_hash, p.part_count, p.file_count, coalesce(p.creator, '') AS creator, p.tags, coalesce(p.source_channel_id, 0) AS source_channel_id, coalesce(p.source_message_id, 0) AS source_message_id, p.source_message_ids, coalesce(p.source_topic_id, 0) AS source_topic_id, coalesce(p.source_caption, '') AS source_caption, coalesce(p.source_posted_at, '0001-01-01 00:00:00+00') AS source_posted_at, coalesce(p.reply_to_message_id, 0) AS reply_to_message_id, coalesce(p.media_album_id, 0) AS media_album_id, coalesce(p.remote_unique_id, '') AS remote_unique_id, coalesce(p.dest_channel_id, 0) AS dest_channel_id, coalesce(p.dest_message_id, 0) AS dest_message_id, p.dest_message_ids, coalesce(p.preview_msg_id, 0) AS preview_msg_id, p.has_preview, p.inspection_note, coalesce(p.package_group_id, 0) AS package_group_id, coalesce(p.ingestion_run_id, 0) AS ingestion_run_id, p.created_at, p.updated_at,
	coalesce(g.name, '') AS group_name,
	CASE WHEN g.id IS NULL THEN 0 ELSE (SELECT count(*) FROM packages m WHERE m.package_group_id = g.id) END AS group_members
FROM unnest(@word_ids::bigint[]) AS m(id) JOIN packages p ON p.id = m.id
LEFT JOIN package_groups g ON g.id = p.package_group_id AND @group_rows::bool
ORDER BY p.created_at DESC, p.id DESC
LIMIT @limit::int
