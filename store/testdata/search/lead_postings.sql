WITH pa AS NOT MATERIALIZED (
	SELECT DISTINCT ON (x.created_at, x.package_id) x.created_at, x.package_id FROM (
	(SELECT w.created_at, w.package_id FROM package_words w
		WHERE w.word = @pair_first_0::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)) x
	ORDER BY x.created_at DESC, x.package_id DESC LIMIT @pair_window::int),
found AS MATERIALIZED (
	SELECT pa.created_at, pa.package_id FROM pa JOIN packages p ON p.id = pa.package_id
	WHERE p.search_vector @@ @match_lexemes::tsquery
	ORDER BY pa.created_at DESC, pa.package_id DESC LIMIT 200),
ends AS ((SELECT x.created_at, x.package_id FROM unnest(@pair_first::text[]) AS l(word)
		CROSS JOIN LATERAL (SELECT w.created_at, w.package_id FROM package_words w
			WHERE w.word = l.word
			ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int) x
		GROUP BY x.created_at, x.package_id
		ORDER BY x.created_at DESC, x.package_id DESC OFFSET @pair_window::int - 1 LIMIT 1)),
cut AS MATERIALIZED (
	SELECT x.created_at, x.package_id FROM ends x
	ORDER BY x.created_at DESC, x.package_id DESC LIMIT 1),
t AS MATERIALIZED (
	SELECT found.package_id AS id FROM found
	UNION ALL
	(SELECT p.id FROM packages p, cut
		WHERE (SELECT count(*) FROM found) < 200
		AND p.search_vector @@ @match_lexemes::tsquery
		AND TRUE
		AND (p.created_at, p.id) < (cut.created_at, cut.package_id)
		ORDER BY p.created_at DESC, p.id DESC LIMIT 200)),
ranked AS MATERIALIZED (
	SELECT p.id, p.created_at, ts_rank(p.search_vector, to_tsquery('english', @rank_tsquery::text))::real AS rank
	FROM packages p WHERE p.id IN (SELECT id FROM t))
SELECT ARRAY(SELECT id FROM ranked ORDER BY created_at DESC, id DESC),
	ARRAY(SELECT rank FROM ranked ORDER BY created_at DESC, id DESC)
