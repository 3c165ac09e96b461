WITH m AS MATERIALIZED (
	SELECT DISTINCT e.created_at, e.id FROM unnest(@token_list::text[]) AS tk(token)
	CROSS JOIN LATERAL (
		SELECT e.created_at, e.id FROM (SELECT token, created_at, package_id AS id, creator FROM package_name_tokens) e
		WHERE e.token = tk.token AND (@creator::text IS NULL OR e.creator = @creator::text) AND (@after_id::bigint IS NULL OR (e.created_at, e.id) < (@after_key::timestamptz, @after_id::bigint))
			AND (e.token <> '' OR EXISTS (SELECT FROM packages p WHERE p.id = e.id AND strpos(lower(p.file_name), @name_text::text) > 0))
		ORDER BY e.created_at DESC, e.id DESC
		LIMIT @limit::int) e
	ORDER BY e.created_at DESC, e.id DESC
	LIMIT @limit::int)
SELECT CASE WHEN @group_rows::bool THEN coalesce(-p.package_group_id, p.id) ELSE p.id END AS row_key,
	0::real AS rank, false AS capped, 0::bigint AS total_rows, lower(p.file_name) AS sort_name,
	p.id, p.file_name, p.file_size, p.archive_type, coalesce(p.content_hash, '') AS content_hash, p.part_count, p.file_count, coalesce(p.creator, '') AS creator, p.tags, coalesce(p.source_channel_id, 0) AS source_channel_id, coalesce(p.source_message_id, 0) AS source_message_id, p.source_message_ids, coalesce(p.source_topic_id, 0) AS source_topic_id, coalesce(p.source_caption, '') AS source_caption, coalesce(p.source_posted_at, '0001-01-01 00:00:00+00') AS source_posted_at, coalesce(p.reply_to_message_id, 0) AS reply_to_message_id, coalesce(p.media_album_id, 0) AS media_album_id, coalesce(p.remote_unique_id, '') AS remote_unique_id, coalesce(p.dest_channel_id, 0) AS dest_channel_id, coalesce(p.dest_message_id, 0) AS dest_message_id, p.dest_message_ids, coalesce(p.preview_msg_id, 0) AS preview_msg_id, p.has_preview, p.inspection_note, coalesce(p.package_group_id, 0) AS package_group_id, coalesce(p.ingestion_run_id, 0) AS ingestion_run_id, p.created_at, p.updated_at,
	coalesce(g.name, '') AS group_name,
	CASE WHEN g.id IS NULL THEN 0 ELSE (SELECT count(*) FROM packages m WHERE m.package_group_id = g.id) END AS group_members
FROM m JOIN packages p ON p.id = m.id
LEFT JOIN package_groups g ON g.id = p.package_group_id AND @group_rows::bool
WHERE (NOT @group_rows::bool OR p.package_group_id IS NULL OR NOT EXISTS (
		SELECT 1 FROM packages n
		WHERE n.package_group_id = p.package_group_id AND (n.created_at, n.id) > (p.created_at, p.id)
		AND (@creator::text IS NULL OR lower(n.creator) = @creator::text)
		AND (@creators::text[] IS NULL OR lower(n.creator) = ANY(@creators::text[]))
		AND (@creator_like::text IS NULL OR lower(n.creator) LIKE lower(@creator_like::text))
		AND (@tags_any::text[] IS NULL OR n.tags && @tags_any::text[])
		AND (@tag_group::int[] IS NULL OR NOT EXISTS (
			SELECT FROM unnest(@tag_group::int[], @tag_name::text[], @tag_like::bool[]) AS tf(grp, name, is_like)
			GROUP BY tf.grp
			HAVING NOT bool_or(CASE WHEN tf.is_like THEN EXISTS (SELECT FROM unnest(n.tags) t WHERE lower(t) LIKE lower(tf.name))
				ELSE tf.name = ANY(n.tags) END)))
		AND (@channel_id::bigint IS NULL OR n.source_channel_id = @channel_id::bigint)
		AND (@archive_type::text IS NULL OR n.archive_type = @archive_type::text)
		AND (@extensions::text[] IS NULL OR lower(n.file_name) LIKE ANY(@extensions::text[]))
		AND (@grouped::bool IS NOT TRUE OR n.package_group_id IS NOT NULL)
		AND (@grouped::bool IS NOT FALSE OR n.package_group_id IS NULL)
		AND (@has_preview::bool IS NULL OR n.has_preview = @has_preview::bool)
		AND (@tsquery::text IS NULL OR n.search_vector @@ to_tsquery('english', @tsquery::text))
		AND (@match_lexemes::tsquery IS NULL OR n.search_vector @@ @match_lexemes::tsquery)
		AND (@grams::text[] IS NULL OR hoard_name_grams(n.file_name) @> @grams::text[])
		AND (@likes::text[] IS NULL OR lower(n.file_name) LIKE ALL(@likes::text[]))
		AND (@substring::text IS NULL OR n.file_name ILIKE @substring::text)
		AND (@name_tokens::text[] IS NULL OR hoard_tokens(lower(n.file_name)) && @name_tokens::text[])
		AND (@name_text::text IS NULL OR strpos(lower(n.file_name), @name_text::text) > 0)))
ORDER BY p.created_at DESC, p.id DESC
LIMIT @limit::int
