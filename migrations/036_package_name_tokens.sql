-- When a search's words match nothing, a substring of the file name is
-- tried (ILIKE, the trigram index of file_name). A substring inside a word
-- ("agonbu" of "DragonBust") has common trigrams ("ago", "gon") whose lists
-- in that index grow with the catalog: 1.5 ms of index at 1,000,000
-- packages, 11 at 10,000,000 (issue #30).
--
-- As with paths (035), a text of ASCII letters and digits lies inside one
-- token of a name wherever it occurs: names are indexed by their tokens
-- (hoard_tokens of the lower-cased name), and name_tokens lists every token
-- names have held (191,000 at 1,000,000 packages) with a trigram index.
-- Such a text is looked up as the tokens that hold it, then the packages
-- whose names list one of them; any other text keeps ILIKE.
CREATE INDEX packages_name_tokens_idx ON packages USING gin (hoard_tokens(lower(file_name))) WITH (fastupdate = off);

-- name_tokens (with "" once a name has a token too long to list) only grows: a token whose packages are gone or renamed finds
-- none, and a reset of the catalog (TRUNCATE packages) empties it. As
-- path_tokens, it has no unique key: writers never wait for each other.
CREATE TABLE name_tokens (
    token TEXT COLLATE "C" NOT NULL
);
INSERT INTO name_tokens (token)
SELECT DISTINCT t FROM packages p, unnest(hoard_tokens(lower(p.file_name))) AS t;
CREATE INDEX name_tokens_token_idx ON name_tokens (token);
CREATE INDEX name_tokens_trgm_idx ON name_tokens USING gin (token gin_trgm_ops) WITH (fastupdate = off);

-- A new package's name, or a new name, by whoever writes it, lists its new
-- tokens.
CREATE FUNCTION hoard_name_tokens_listed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO name_tokens (token)
    SELECT t FROM unnest(hoard_tokens(lower(NEW.file_name))) AS t
    WHERE NOT EXISTS (SELECT FROM name_tokens l WHERE l.token = t);
    RETURN NULL;
END
$$;
CREATE TRIGGER packages_name_tokens_insert AFTER INSERT ON packages
    FOR EACH ROW EXECUTE FUNCTION hoard_name_tokens_listed();
CREATE TRIGGER packages_name_tokens_update AFTER UPDATE OF file_name ON packages
    FOR EACH ROW WHEN (OLD.file_name IS DISTINCT FROM NEW.file_name)
    EXECUTE FUNCTION hoard_name_tokens_listed();

CREATE FUNCTION hoard_name_tokens_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE name_tokens;
    RETURN NULL;
END
$$;
CREATE TRIGGER packages_name_tokens_truncate AFTER TRUNCATE ON packages
    FOR EACH STATEMENT EXECUTE FUNCTION hoard_name_tokens_truncate();

ANALYZE packages;
ANALYZE name_tokens;
