-- A search for one word with a creator filter finds the creator's newest
-- packages that hold it (issue #30). The GIN index on creator and words
-- (022) intersects the creator's list of packages with the word's — a
-- prolific creator's list grows with the catalog (80,000 packages at
-- 1,000,000) — and every match is then read to learn its date: 13 ms p95
-- at 100,000 packages, 28 ms at 1,000,000.
--
-- package_creator_words is package_words (023) per lower-cased creator:
-- the newest packages of a creator and a lexeme are the first entries of
-- their range of the primary key, read from the index alone, in a time
-- that does not grow with the catalog. rank is package_words' (what the
-- lexeme adds to ts_rank for a one-word query).
CREATE TABLE package_creator_words (
    creator    TEXT COLLATE "C" NOT NULL,
    word       TEXT COLLATE "C" NOT NULL,
    created_at TIMESTAMPTZ      NOT NULL,
    package_id BIGINT           NOT NULL,
    rank       REAL             NOT NULL
);

-- Every change to a package's creator, words or date, by whoever makes it,
-- keeps its entries in step; the old row says which to delete, through
-- the primary key. A package without a creator has none.
CREATE FUNCTION hoard_package_creator_words() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.creator IS NOT NULL THEN
        DELETE FROM package_creator_words
        WHERE creator = lower(OLD.creator) AND word = ANY (tsvector_to_array(OLD.search_vector))
            AND created_at = OLD.created_at AND package_id = OLD.id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.creator IS NOT NULL THEN
        INSERT INTO package_creator_words (creator, word, created_at, package_id, rank)
        SELECT lower(NEW.creator), w.word, NEW.created_at, NEW.id, w.rank FROM hoard_words_of(NEW.search_vector) AS w;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER packages_creator_words_insert AFTER INSERT ON packages
    FOR EACH ROW EXECUTE FUNCTION hoard_package_creator_words();
CREATE TRIGGER packages_creator_words_update AFTER UPDATE ON packages
    FOR EACH ROW WHEN (OLD.search_vector IS DISTINCT FROM NEW.search_vector OR OLD.creator IS DISTINCT FROM NEW.creator
        OR OLD.created_at IS DISTINCT FROM NEW.created_at OR OLD.id IS DISTINCT FROM NEW.id)
    EXECUTE FUNCTION hoard_package_creator_words();
CREATE TRIGGER packages_creator_words_delete AFTER DELETE ON packages
    FOR EACH ROW EXECUTE FUNCTION hoard_package_creator_words();

CREATE FUNCTION hoard_package_creator_words_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    TRUNCATE package_creator_words;
    RETURN NULL;
END
$$;
CREATE TRIGGER packages_creator_words_truncate AFTER TRUNCATE ON packages
    FOR EACH STATEMENT EXECUTE FUNCTION hoard_package_creator_words_truncate();

-- From package_words, which holds the same lexemes and ranks.
INSERT INTO package_creator_words (creator, word, created_at, package_id, rank)
SELECT lower(p.creator), w.word, w.created_at, w.package_id, w.rank
FROM package_words w JOIN packages p ON p.id = w.package_id
WHERE p.creator IS NOT NULL;
ALTER TABLE package_creator_words ADD PRIMARY KEY (creator, word, created_at, package_id) INCLUDE (rank);
ANALYZE package_creator_words;
