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
-- hoard_tokens lists the tokens of a lower-cased text, each once, in
-- order: its runs of ASCII letters and digits (any other character ends a
-- token, and a search text with one is not looked up by tokens:
-- store/search_sql.go, bindPathLookup). A token longer than 100 characters
-- is listed as '' (the GIN index cannot hold a key of any length); a
-- lookup by tokens always asks for '' too and tests the text on what it
-- finds, so nothing inside one is missed.
CREATE FUNCTION hoard_tokens(lowered TEXT) RETURNS TEXT[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT ARRAY(
        SELECT DISTINCT CASE WHEN length(t) <= 100 THEN t ELSE '' END
        FROM unnest(regexp_split_to_array(lowered, '[^a-z0-9]+')) AS t
        WHERE t <> ''
        ORDER BY 1)
$$;

-- Both GIN indexes take their entries at once (fastupdate off): a pending
-- list, which a search reads whole, made the planner pass the trigram index
-- of path_tokens by for a scan of the table (1 ms at 16,000 tokens, where
-- the index takes 0.05). Chunks and new tokens come one package at a time.
-- The index holds the chunk's creator too (btree_gin, as in 034): a
-- creator's lookup of a token the creator's chunks rarely hold intersects
-- both in the index (0.5 ms at 10,000,000 packages), where a bitmap of the
-- creator's 84,000 chunks from the trigram index cost 18.
ALTER TABLE package_paths ADD COLUMN tokens TEXT[] COLLATE "C"
    GENERATED ALWAYS AS (hoard_tokens(paths)) STORED;
CREATE INDEX package_paths_tokens_idx ON package_paths USING gin (creator, tokens) WITH (fastupdate = off);

-- path_tokens lists every token of the chunks, for finding the tokens that
-- hold a text, and "" once a chunk has a token too long to list: a text no
-- token holds, while none has, is in no path (no lookup at all). It only grows: a token whose packages are gone finds no
-- chunk, and the next catalog reset (TRUNCATE package_files) empties it.
-- A token is listed by the first writer that does not see it listed: with
-- no unique key, two transactions that list the same new token never wait
-- for each other (with one, writers of several packages deadlocked), and
-- the rare token listed twice is read once (DISTINCT).
CREATE TABLE path_tokens (
    token TEXT COLLATE "C" NOT NULL
);
INSERT INTO path_tokens (token)
SELECT DISTINCT t FROM package_paths c, unnest(c.tokens) AS t;
CREATE INDEX path_tokens_token_idx ON path_tokens (token);
CREATE INDEX path_tokens_trgm_idx ON path_tokens USING gin (token gin_trgm_ops) WITH (fastupdate = off);

-- Every statement that writes chunks, by whoever makes it, lists their new
-- tokens.
CREATE FUNCTION hoard_path_tokens_listed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO path_tokens (token)
    SELECT DISTINCT t FROM new_chunks c, unnest(c.tokens) AS t
    WHERE NOT EXISTS (SELECT FROM path_tokens l WHERE l.token = t);
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
