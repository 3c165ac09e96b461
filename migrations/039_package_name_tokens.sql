-- A fragment inside the words of names ("ragonb" of "DragonBust"), when
-- more tokens hold it than the names' token index is asked for at once
-- (store/search_sql.go, maxTokens), is looked up by the trigram index of
-- names, and every name holding it is read to learn its date: 5,557 rows
-- at 10,000,000 packages, 20-31 ms (issue #30).
--
-- package_name_tokens lists, for every token of four characters or more of
-- every lower-cased name (hoard_tokens, migration 035, with '' for one too
-- long to list), the package and its date, in the order of both: the
-- newest packages whose names hold a token are the first entries of its
-- range of the primary key, read from the index alone. A fragment of four
-- ASCII letters or digits or more lies inside one token of that length
-- wherever it occurs, so its newest names are among the first entries of
-- the tokens that hold it (name_tokens lists them): a page merges a page's
-- worth of each. Shorter tokens are left out (every name has its
-- extension's, "zip"): such a fragment is looked up as before.
--
-- With the package's lower-cased creator, a second index serves a search
-- with a creator filter the same way (the creator's newest entries of each
-- token), where testing the creator on each token's newest entries would
-- read every entry of a token the creator rarely holds.
CREATE TABLE package_name_tokens (
    token      TEXT COLLATE "C" NOT NULL,
    created_at TIMESTAMPTZ      NOT NULL,
    package_id BIGINT           NOT NULL,
    creator    TEXT COLLATE "C"
);

-- hoard_listed_name_tokens lists the tokens of a name that
-- package_name_tokens holds. The triggers, the backfill below and the
-- benchmarks' bulk load (store/storetest) agree with it.
CREATE FUNCTION hoard_listed_name_tokens(file_name TEXT) RETURNS TEXT[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT ARRAY(SELECT t FROM unnest(hoard_tokens(lower(file_name))) AS t WHERE length(t) >= 4 OR t = '')
$$;

-- Every change to a package's name, date or creator, by whoever makes it,
-- keeps its entries in step; the old row says which to delete, through the
-- primary key.
CREATE FUNCTION hoard_package_name_tokens() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        DELETE FROM package_name_tokens
        WHERE token = ANY (hoard_listed_name_tokens(OLD.file_name)) AND created_at = OLD.created_at AND package_id = OLD.id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO package_name_tokens (token, created_at, package_id, creator)
        SELECT t, NEW.created_at, NEW.id, lower(NEW.creator) FROM unnest(hoard_listed_name_tokens(NEW.file_name)) AS t;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER packages_name_token_entries_insert AFTER INSERT ON packages
    FOR EACH ROW EXECUTE FUNCTION hoard_package_name_tokens();
CREATE TRIGGER packages_name_token_entries_update AFTER UPDATE ON packages
    FOR EACH ROW WHEN (OLD.file_name IS DISTINCT FROM NEW.file_name OR OLD.creator IS DISTINCT FROM NEW.creator
        OR OLD.created_at IS DISTINCT FROM NEW.created_at OR OLD.id IS DISTINCT FROM NEW.id)
    EXECUTE FUNCTION hoard_package_name_tokens();
CREATE TRIGGER packages_name_token_entries_delete AFTER DELETE ON packages
    FOR EACH ROW EXECUTE FUNCTION hoard_package_name_tokens();

CREATE FUNCTION hoard_package_name_tokens_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE package_name_tokens;
    RETURN NULL;
END
$$;
CREATE TRIGGER packages_name_token_entries_truncate AFTER TRUNCATE ON packages
    FOR EACH STATEMENT EXECUTE FUNCTION hoard_package_name_tokens_truncate();

INSERT INTO package_name_tokens (token, created_at, package_id, creator)
SELECT t, p.created_at, p.id, lower(p.creator) FROM packages p, unnest(hoard_listed_name_tokens(p.file_name)) AS t;
ALTER TABLE package_name_tokens ADD PRIMARY KEY (token, created_at, package_id);
CREATE INDEX package_name_tokens_creator_idx ON package_name_tokens (creator, token, created_at, package_id) WHERE creator IS NOT NULL;
ANALYZE package_name_tokens;
