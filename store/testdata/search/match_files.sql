SELECT i.id, count(*), (array_agg(x.path ORDER BY x.ordinal))[1:3]
FROM unnest(@ids::bigint[]) AS i(id)
CROSS JOIN LATERAL (
	SELECT f.path, f.ordinal FROM package_files f
	WHERE f.package_id = i.id AND f.path ILIKE @path_like::text
	AND (@path_text::text IS NULL OR strpos(lower(f.path), lower(@path_text::text)) > 0)
	ORDER BY f.ordinal LIMIT 1000) x
GROUP BY i.id
