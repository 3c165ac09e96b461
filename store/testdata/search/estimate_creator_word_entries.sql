EXPLAIN (FORMAT JSON) SELECT 1 FROM package_creator_words
WHERE creator = ANY(@creators::text[]) AND word = ANY(@lexemes::text[])
