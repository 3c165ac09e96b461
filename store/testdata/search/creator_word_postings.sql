WITH RECURSIVE q AS MATERIALIZED (
	SELECT tsvector_to_array(to_tsvector('english', @word::text)) AS lex
), l(word) AS (
	SELECT (SELECT w.word FROM package_words w WHERE w.word >= (SELECT lex[1] FROM q) ORDER BY w.word LIMIT 1)
	UNION ALL
	SELECT (SELECT w.word FROM package_words w WHERE w.word > l.word ORDER BY w.word LIMIT 1)
	FROM l WHERE starts_with(l.word, (SELECT lex[1] FROM q))
), lexemes AS MATERIALIZED (
	SELECT ARRAY(SELECT word FROM l WHERE starts_with(word, (SELECT lex[1] FROM q)) LIMIT @max_lexemes::int + 1) AS words
),
cut AS MATERIALIZED (
	SELECT coalesce(c.created_at, '-infinity') AS created_at, coalesce(c.package_id, 0) AS package_id
	FROM lexemes LEFT JOIN LATERAL (SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = (@creators::text[])[1] AND w.word = lexemes.words[1]
		AND (@after_id::bigint IS NULL OR (w.created_at, w.package_id) < (@after_key::timestamptz, @after_id::bigint))
		ORDER BY w.created_at DESC, w.package_id DESC OFFSET @limit::int - 1 LIMIT 1) c ON cardinality(lexemes.words) > 1
),
newest AS MATERIALIZED (
	SELECT x.created_at, x.package_id, sum(x.rank)::real AS rank
	FROM lexemes, unnest(lexemes.words) AS u(word), unnest(@creators::text[]) AS cr(creator)
	CROSS JOIN LATERAL (SELECT w.created_at, w.package_id, w.rank FROM package_creator_words w
		WHERE w.creator = cr.creator AND w.word = u.word
		AND (@after_id::bigint IS NULL OR (w.created_at, w.package_id) < (@after_key::timestamptz, @after_id::bigint))
		AND (w.created_at, w.package_id) >= ((SELECT created_at FROM cut), (SELECT package_id FROM cut))
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @limit::int) x
	WHERE (SELECT cardinality(lex) FROM q) = 1 AND cardinality(lexemes.words) <= @max_lexemes::int
	GROUP BY x.created_at, x.package_id
	ORDER BY x.created_at DESC, x.package_id DESC LIMIT @limit::int
)
SELECT (SELECT cardinality(lex) FROM q), (SELECT words FROM lexemes),
	ARRAY(SELECT package_id FROM newest ORDER BY created_at DESC, package_id DESC),
	ARRAY(SELECT rank FROM newest ORDER BY created_at DESC, package_id DESC)
