EXPLAIN (FORMAT JSON) SELECT 1 FROM package_paths pp
WHERE (@path_text::text IS NULL OR strpos(pp.paths, lower(@path_text::text)) > 0)
		AND (@path_like::text IS NULL OR pp.paths LIKE lower(@path_like::text))
		AND (@path_tokens::text[] IS NULL OR pp.tokens && @path_tokens::text[])
	AND (@creator::text IS NULL OR pp.creator = @creator::text)
