WITH pa AS NOT MATERIALIZED (
	SELECT DISTINCT ON (x.created_at, x.package_id) x.created_at, x.package_id FROM (
	(SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_0::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_1*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_1::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_2*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_2::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_3*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_3::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_4*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_4::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_5*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_5::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_6*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_6::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_7*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_7::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_8*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_8::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_9*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_9::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_10*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_10::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_11*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_11::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_12*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_12::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_13*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_13::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_14*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_14::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_15*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_15::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_16*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_16::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_17*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_17::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_18*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_18::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_19*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_19::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_20*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_20::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_21*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_21::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_first_22*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_first_22::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)) x
	ORDER BY x.created_at DESC, x.package_id DESC LIMIT @pair_window::int),
pb AS NOT MATERIALIZED (
	SELECT DISTINCT ON (x.created_at, x.package_id) x.created_at, x.package_id FROM (
	(SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_0::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_1*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_1::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_2*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_2::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_3*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_3::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_4*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_4::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_5*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_5::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_6*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_6::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_7*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_7::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_8*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_8::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_9*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_9::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_10*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_10::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_11*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_11::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_12*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_12::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_13*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_13::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_14*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_14::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_15*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_15::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_16*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_16::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_17*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_17::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_18*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_18::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_19*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_19::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_20*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_20::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_21*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_21::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)
	UNION ALL (/*if @pair_second_22*/SELECT w.created_at, w.package_id FROM package_creator_words w
		WHERE w.creator = @creator::text AND w.word = @pair_second_22::text
		ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int)) x
	ORDER BY x.created_at DESC, x.package_id DESC LIMIT @pair_window::int),
found AS MATERIALIZED (
	SELECT pa.created_at, pa.package_id FROM pa JOIN pb ON pb.created_at = pa.created_at AND pb.package_id = pa.package_id
	WHERE (@rest_group::int[] IS NULL OR NOT EXISTS (
		SELECT FROM unnest(@rest_group::int[], @rest_word::text[]) AS r(grp, word)
		GROUP BY r.grp
		HAVING NOT bool_or(EXISTS (SELECT FROM package_words c
			WHERE c.word = r.word AND c.created_at = pa.created_at AND c.package_id = pa.package_id))))
	ORDER BY pa.created_at DESC, pa.package_id DESC LIMIT 200),
ends AS (
	(SELECT x.created_at, x.package_id FROM unnest(@pair_first::text[]) AS l(word)
		CROSS JOIN LATERAL (SELECT w.created_at, w.package_id FROM package_creator_words w
			WHERE w.creator = @creator::text AND w.word = l.word
			ORDER BY w.created_at DESC, w.package_id DESC LIMIT @pair_window::int) x
		GROUP BY x.created_at, x.package_id
		ORDER BY x.created_at DESC, x.package_id DESC OFFSET @pair_window::int - 1 LIMIT 1)
	UNION ALL
	(SELECT x.created_at, x.package_id FROM unnest(@pair_second::text[]) AS l(word)
		CROSS JOIN LATERAL (SELECT w.created_at, w.package_id FROM package_creator_words w
			WHERE w.creator = @creator::text AND w.word = l.word
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
		AND lower(p.creator) = @creator::text
		AND (p.created_at, p.id) < (cut.created_at, cut.package_id)
		ORDER BY p.created_at DESC, p.id DESC LIMIT 200)),
ranked AS MATERIALIZED (
	SELECT p.id, p.created_at, ts_rank(p.search_vector, to_tsquery('english', @rank_tsquery::text))::real AS rank
	FROM packages p WHERE p.id IN (SELECT id FROM t))
SELECT ARRAY(SELECT id FROM ranked ORDER BY created_at DESC, id DESC),
	ARRAY(SELECT rank FROM ranked ORDER BY created_at DESC, id DESC)
