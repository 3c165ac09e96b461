SELECT cardinality(q.lex), coalesce(q.lex[1], ''), ARRAY(
	WITH RECURSIVE l(word) AS (
	SELECT (SELECT w.word FROM package_words w WHERE w.word >= q.lex[1] ORDER BY w.word LIMIT 1)
	UNION ALL
	SELECT (SELECT w.word FROM package_words w WHERE w.word > l.word ORDER BY w.word LIMIT 1)
	FROM l WHERE starts_with(l.word, q.lex[1])
)
	SELECT word FROM l WHERE starts_with(word, q.lex[1]) LIMIT @max_lexemes::int + 1)
FROM unnest(@words::text[]) WITH ORDINALITY AS u(word, ord)
CROSS JOIN LATERAL (SELECT tsvector_to_array(to_tsvector('english', u.word)) AS lex) q
ORDER BY u.ord
