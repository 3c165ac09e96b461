-- A search for one word finds the newest packages that hold it (issue #14:
-- the bot's /search, 20 users at once). The full-text index (GIN) lists
-- the packages of a word but cannot say which are the newest: a word of a
-- few thousand packages read a few thousand rows, one random page each, to
-- learn their dates, and a frequent one walked the newest packages testing
-- each (thousands of rows for a word in one name of a hundred). Together
-- about 10 ms of PostgreSQL's time per search, which 20 searches at once
-- queue behind on two cores.
--
-- package_words lists every lexeme of every package's search_vector with
-- the package's date, in the order of both: the newest packages of a
-- lexeme are the first entries of its range of the primary key, read from
-- the index alone. Lexemes are compared byte by byte (COLLATE "C"), so
-- that a word's prefix is one range of the index and the distinct lexemes
-- that start with it are found by stepping through that range.
--
-- rank is what the lexeme adds to ts_rank(search_vector, query) for a
-- query of one word that matches it: ts_rank of a single term sums, over
-- the vector's lexemes the term matches (one, or all those a prefix
-- starts), a value of each lexeme's own positions and weights — its
-- ts_rank alone. Summed, they rank a one-word search's candidates without
-- reading their rows; the primary key's index carries it, so that they are
-- read from the index alone too.
CREATE TABLE package_words (
    word       TEXT COLLATE "C" NOT NULL,
    created_at TIMESTAMPTZ      NOT NULL,
    package_id BIGINT           NOT NULL,
    rank       REAL             NOT NULL
);

-- hoard_words_of lists the entries of a search vector: each lexeme with
-- its ts_rank in v (the lexeme as a query of itself, quoted, so that it is
-- taken as it is, not normalised again). The triggers, the backfill below
-- and the benchmarks' bulk load all fill package_words through it.
CREATE FUNCTION hoard_words_of(v TSVECTOR) RETURNS TABLE (word TEXT, rank REAL)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT w, ts_rank(v, ('''' || replace(replace(w, '\', '\\'), '''', '''''') || '''')::tsquery)
    FROM unnest(tsvector_to_array(v)) AS w
$$;

-- Every change to a package's words or date, by whoever makes it, keeps
-- its entries in step. The entries of a package are derived from its row,
-- so the old row says which to delete, through the primary key.
CREATE FUNCTION hoard_package_words() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        DELETE FROM package_words
        WHERE word = ANY (tsvector_to_array(OLD.search_vector)) AND created_at = OLD.created_at AND package_id = OLD.id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO package_words (word, created_at, package_id, rank)
        SELECT w.word, NEW.created_at, NEW.id, w.rank FROM hoard_words_of(NEW.search_vector) AS w;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER packages_words_insert AFTER INSERT ON packages
    FOR EACH ROW EXECUTE FUNCTION hoard_package_words();
CREATE TRIGGER packages_words_update AFTER UPDATE ON packages
    FOR EACH ROW WHEN (OLD.search_vector IS DISTINCT FROM NEW.search_vector
        OR OLD.created_at IS DISTINCT FROM NEW.created_at OR OLD.id IS DISTINCT FROM NEW.id)
    EXECUTE FUNCTION hoard_package_words();
CREATE TRIGGER packages_words_delete AFTER DELETE ON packages
    FOR EACH ROW EXECUTE FUNCTION hoard_package_words();

CREATE FUNCTION hoard_package_words_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE package_words;
    RETURN NULL;
END
$$;
CREATE TRIGGER packages_words_truncate AFTER TRUNCATE ON packages
    FOR EACH STATEMENT EXECUTE FUNCTION hoard_package_words_truncate();

INSERT INTO package_words (word, created_at, package_id, rank)
SELECT w.word, p.created_at, p.id, w.rank FROM packages p, hoard_words_of(p.search_vector) AS w;
ALTER TABLE package_words ADD PRIMARY KEY (word, created_at, package_id) INCLUDE (rank);
-- The count a capped search shows is the planner's estimate of the
-- entries of its lexemes: keep the frequent ones' counts.
ALTER TABLE package_words ALTER COLUMN word SET STATISTICS 1000;
ANALYZE package_words;
