WITH t AS MATERIALIZED (SELECT unnest(@word_ids::bigint[]) AS id),
f AS MATERIALIZED (WITH RECURSIVE creator_walk(n, last_id, last_chunk, seen, full_batch, hits, ids) AS (
		SELECT 0, @paths_below::bigint, 0, 0::bigint, true, 0::bigint, '{}'::bigint[]
		WHERE (@path_like::text IS NOT NULL OR @path_tokens::text[] IS NOT NULL) AND (SELECT count(*) FROM t) < 200
		UNION ALL
		SELECT w.n + 1, b.last_id, b.last_chunk, w.seen + b.rows, b.rows = l.size,
			(SELECT count(DISTINCT u) FROM unnest(w.ids || b.ids) AS u), w.ids || b.ids
		FROM creator_walk w
		CROSS JOIN LATERAL (SELECT CASE WHEN w.n = 0 THEN @paths_probe::int
			ELSE least(@paths_batch::int, ((@paths_want::int - w.hits) * w.seen / greatest(w.hits, 1) * 3 / 2 + 10)::int) END AS size) l
		CROSS JOIN LATERAL (
			SELECT count(*) AS rows,
				(array_agg(x.package_id ORDER BY x.package_id, x.chunk))[1] AS last_id,
				(array_agg(x.chunk ORDER BY x.package_id, x.chunk))[1] AS last_chunk,
				coalesce(array_agg(x.package_id ORDER BY x.package_id DESC, x.chunk DESC) FILTER (WHERE x.hit), '{}') AS ids
			FROM (SELECT pp.package_id, pp.chunk, (@path_text::text IS NULL OR strpos(pp.paths, lower(@path_text::text)) > 0)
		AND (@path_like::text IS NULL OR pp.paths LIKE lower(@path_like::text))
		AND (@path_tokens::text[] IS NULL OR pp.tokens && @path_tokens::text[])
					AND pp.package_id NOT IN (SELECT id FROM t) AS hit
				FROM package_paths pp
				WHERE pp.creator = @creator::text AND (pp.package_id, pp.chunk) < (w.last_id, w.last_chunk)
				ORDER BY pp.package_id DESC, pp.chunk DESC LIMIT l.size) x) b
		WHERE w.n = 0 OR (w.n < 4 AND w.full_batch AND w.hits < @paths_want::int
			AND w.hits * 20 >= @paths_probe::int)
	),
	walked AS MATERIALIZED (SELECT * FROM creator_walk ORDER BY n DESC LIMIT 1)
SELECT fp.id FROM ((
		SELECT DISTINCT pp.package_id AS id FROM package_paths pp
		WHERE (@path_like::text IS NOT NULL OR @path_tokens::text[] IS NOT NULL) AND (SELECT count(*) FROM t) < 200
		AND (SELECT w.full_batch AND w.hits < @paths_want::int FROM walked w)
		AND (@path_text::text IS NULL OR strpos(pp.paths, lower(@path_text::text)) > 0)
		AND (@path_like::text IS NULL OR pp.paths LIKE lower(@path_like::text))
		AND (@path_tokens::text[] IS NULL OR pp.tokens && @path_tokens::text[])
		AND pp.package_id < @paths_below::bigint AND pp.package_id NOT IN (SELECT id FROM t)
		AND pp.creator = @creator::text
		ORDER BY pp.package_id DESC LIMIT @paths_want::int)
	UNION (
		SELECT DISTINCT u.id FROM walked w, unnest(w.ids) AS u(id)
		WHERE NOT (w.full_batch AND w.hits < @paths_want::int)
		ORDER BY u.id DESC LIMIT @paths_want::int)) fp
	WHERE NOT @filtered::bool OR EXISTS (SELECT FROM packages p WHERE p.id = fp.id AND (@creator::text IS NULL OR lower(p.creator) = @creator::text)
		AND (@creators::text[] IS NULL OR lower(p.creator) = ANY(@creators::text[]))
		AND (@creator_like::text IS NULL OR lower(p.creator) LIKE lower(@creator_like::text))
		AND (@tags_any::text[] IS NULL OR p.tags && @tags_any::text[])
		AND (@tag_group::int[] IS NULL OR NOT EXISTS (
			SELECT FROM unnest(@tag_group::int[], @tag_name::text[], @tag_like::bool[]) AS tf(grp, name, is_like)
			GROUP BY tf.grp
			HAVING NOT bool_or(CASE WHEN tf.is_like THEN EXISTS (SELECT FROM unnest(p.tags) t WHERE lower(t) LIKE lower(tf.name))
				ELSE tf.name = ANY(p.tags) END)))
		AND (@channel_id::bigint IS NULL OR p.source_channel_id = @channel_id::bigint)
		AND (@archive_type::text IS NULL OR p.archive_type = @archive_type::text)
		AND (@extensions::text[] IS NULL OR lower(p.file_name) LIKE ANY(@extensions::text[]))
		AND (@grouped::bool IS NOT TRUE OR p.package_group_id IS NOT NULL)
		AND (@grouped::bool IS NOT FALSE OR p.package_group_id IS NULL)
		AND (@has_preview::bool IS NULL OR p.has_preview = @has_preview::bool))),
candidates AS MATERIALIZED (
	SELECT p.id, p.created_at, p.package_group_id, lower(p.file_name) AS sort_name, p.file_size,
		coalesce(c.rank, 0)::real AS rank
	FROM packages p LEFT JOIN unnest(@word_ids::bigint[], @word_ranks::real[]) AS c(id, rank) ON c.id = p.id
	WHERE p.id IN (SELECT id FROM t UNION SELECT id FROM f)),
r AS (
	SELECT DISTINCT ON (k.row_key) k.row_key, c.*
	FROM candidates c
	CROSS JOIN LATERAL (SELECT CASE WHEN @group_rows::bool THEN coalesce(-c.package_group_id, c.id) ELSE c.id END AS row_key) k
	ORDER BY k.row_key, c.rank DESC, c.created_at DESC, c.id DESC)
SELECT r.row_key, r.rank, lower(p.file_name) AS sort_name,
	(SELECT count(*) FROM t) >= 200 OR (SELECT count(*) FROM f) >= @paths_want::int AS capped,
	(SELECT count(*) FROM t) >= 200 AS words_capped,
	(SELECT count(*) FROM r) AS total_rows,
	p.id, p.file_name, p.file_size, p.archive_type, coalesce(p.content_hash, '') AS content_hash, p.part_count, p.file_count, coalesce(p.creator, '') AS creator, p.tags, coalesce(p.source_channel_id, 0) AS source_channel_id, coalesce(p.source_message_id, 0) AS source_message_id, p.source_message_ids, coalesce(p.source_topic_id, 0) AS source_topic_id, coalesce(p.source_caption, '') AS source_caption, coalesce(p.source_posted_at, '0001-01-01 00:00:00+00') AS source_posted_at, coalesce(p.reply_to_message_id, 0) AS reply_to_message_id, coalesce(p.media_album_id, 0) AS media_album_id, coalesce(p.remote_unique_id, '') AS remote_unique_id, coalesce(p.dest_channel_id, 0) AS dest_channel_id, coalesce(p.dest_message_id, 0) AS dest_message_id, p.dest_message_ids, coalesce(p.preview_msg_id, 0) AS preview_msg_id, p.has_preview, p.inspection_note, coalesce(p.package_group_id, 0) AS package_group_id, coalesce(p.ingestion_run_id, 0) AS ingestion_run_id, p.created_at, p.updated_at,
	coalesce(g.name, '') AS group_name,
	CASE WHEN g.id IS NULL THEN 0 ELSE (SELECT count(*) FROM packages m WHERE m.package_group_id = g.id) END AS group_members
FROM (SELECT * FROM r WHERE (@after_id::bigint IS NULL OR (r.file_size, r.row_key) < (@after_key::bigint, @after_id::bigint)) ORDER BY r.file_size DESC, r.row_key DESC LIMIT @limit::int) r
JOIN packages p ON p.id = r.id
LEFT JOIN package_groups g ON g.id = p.package_group_id AND r.row_key < 0
ORDER BY r.file_size DESC, r.row_key DESC
