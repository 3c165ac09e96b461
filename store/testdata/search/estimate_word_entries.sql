EXPLAIN (FORMAT JSON) SELECT 1 FROM package_words WHERE word = ANY(@lexemes::text[])
