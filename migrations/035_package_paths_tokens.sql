-- A search whose words match fewer packages than fill its candidates looks
-- up the packages whose paths hold its text too (issue #30). The trigram
-- index of package_paths answers that for any text, but a chunk of 20 or
-- more paths holds hundreds of trigrams: a rare word's lookup read the long
-- lists of its common trigrams ("ave", "ara") and rechecked ten chunks for
-- each one that held it, 3–5 ms at 1,000,000 packages, most of a rare
-- word's search.
--
-- A text of letters and digits alone lies, wherever it occurs in a path,
-- inside one run of letters and digits: a token. Each chunk now lists its
-- tokens (tokens, kept by PostgreSQL from its paths) in a GIN index, and
-- path_tokens lists every token the chunks have held, with a trigram index
-- of its own (16,000 short tokens at 1,000,000 packages). Such a text is
-- looked up as the few tokens that hold it, then the chunks that list one
-- of them: 0.2 ms where the trigrams took 3. Texts with other characters
-- ("arm_left_07", "dragon head") keep the trigram index.
--
-- A token longer than 100 characters is listed as '' (the GIN
-- index cannot hold a key of any length); a lookup by tokens always asks
-- for '' too and tests the text on the chunk, so nothing inside one is
-- missed. Tokens are runs of the ASCII letters and digits of the lower-cased
-- paths: any other character ends a token, and a text with one is not
-- looked up by tokens (store/search_sql.go, pathTokens).
CREATE FUNCTION hoard_path_tokens(paths TEXT) RETURNS TEXT[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT ARRAY(
        SELECT DISTINCT CASE WHEN length(t) <= 100 THEN t ELSE '' END
        FROM unnest(regexp_split_to_array(paths, '[^a-z0-9]+')) AS t
        WHERE t <> ''
        ORDER BY 1)
$$;

-- Both GIN indexes take their entries at once (fastupdate off): a pending
-- list, which a search reads whole, made the planner pass the trigram index
-- of path_tokens by for a scan of the table (1 ms at 16,000 tokens, where
-- the index takes 0.05). Chunks and new tokens come one package at a time.
ALTER TABLE package_paths ADD COLUMN tokens TEXT[] COLLATE "C"
    GENERATED ALWAYS AS (hoard_path_tokens(paths)) STORED;
CREATE INDEX package_paths_tokens_idx ON package_paths USING gin (tokens) WITH (fastupdate = off);

-- path_tokens lists every token of the chunks, for finding the tokens that
-- hold a text. It only grows: a token whose packages are gone finds no
-- chunk, and the next catalog reset (TRUNCATE package_files) empties it.
CREATE TABLE path_tokens (
    token TEXT COLLATE "C" PRIMARY KEY
);
INSERT INTO path_tokens (token)
SELECT DISTINCT t FROM package_paths c, unnest(c.tokens) AS t WHERE t <> '' ORDER BY t;
CREATE INDEX path_tokens_trgm_idx ON path_tokens USING gin (token gin_trgm_ops) WITH (fastupdate = off);

-- Every statement that writes chunks, by whoever makes it, lists their new
-- tokens, in order (two writers of the same new tokens wait for each other
-- in the same order, never in a circle).
CREATE FUNCTION hoard_path_tokens_listed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO path_tokens (token)
    SELECT DISTINCT t FROM new_chunks c, unnest(c.tokens) AS t
    WHERE t <> '' ORDER BY t
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;
CREATE TRIGGER package_paths_tokens_insert AFTER INSERT ON package_paths
    REFERENCING NEW TABLE AS new_chunks FOR EACH STATEMENT EXECUTE FUNCTION hoard_path_tokens_listed();
CREATE TRIGGER package_paths_tokens_update AFTER UPDATE ON package_paths
    REFERENCING NEW TABLE AS new_chunks FOR EACH STATEMENT EXECUTE FUNCTION hoard_path_tokens_listed();

CREATE FUNCTION hoard_path_tokens_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE path_tokens;
    RETURN NULL;
END
$$;
CREATE TRIGGER package_files_path_tokens_truncate AFTER TRUNCATE ON package_files
    FOR EACH STATEMENT EXECUTE FUNCTION hoard_path_tokens_truncate();

ANALYZE package_paths;
ANALYZE path_tokens;
