-- Search that finds what people type (issue #16): short queries inside
-- words, sorting by name and size, and creator and tag filters that match
-- by prefix from lists of the existing ones.

-- hoard_name_grams is every 1- and 2-character piece of the lower-cased
-- letters and digits of a name ("Dragon.zip" → d, r, …, dr, ra, ag, …, zi,
-- ip): a query of 1–2 characters finds the names that hold it anywhere in a
-- word through a GIN index on it. pg_trgm cannot: a 2-character substring
-- inside a word has no trigram of its own.
CREATE FUNCTION hoard_name_grams(t TEXT) RETURNS TEXT[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(DISTINCT substr(w, i, n)), '{}')
    FROM regexp_split_to_table(lower(t), '[^[:alnum:]]+') AS w,
         generate_series(1, 2) AS n,
         generate_series(1, length(w)) AS i
    WHERE i + n - 1 <= length(w)
$$;
CREATE INDEX packages_name_grams_idx ON packages USING gin (hoard_name_grams(file_name)) WITH (fastupdate = off);
-- About 1,300 grams of letters and digits: statistics on all of them let
-- the planner (and the search's own estimate) know a rare one from a
-- common one.
ALTER INDEX packages_name_grams_idx ALTER COLUMN 1 SET STATISTICS 2000;
-- The same for the words of names: the search decides between walking the
-- newest packages and the full-text index on the planner's estimate of a
-- query's matches, which is only as good as the lexemes it keeps.
ALTER TABLE packages ALTER COLUMN search_vector SET STATISTICS 1000;

-- Sorting by name (case-insensitive) and by size, largest first, pages
-- through an index.
CREATE INDEX packages_name_sort_idx ON packages (lower(file_name), id);
CREATE INDEX packages_size_sort_idx ON packages (file_size DESC, id DESC);

-- The creators and tags the catalog has held: the filter bar's suggestions,
-- and what a creator or tag prefix resolves to (a filter then uses the
-- indexes on packages). A name whose last package went stays listed: it
-- matches nothing.
CREATE TABLE catalog_creators (
    creator TEXT PRIMARY KEY,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX catalog_creators_lower_idx ON catalog_creators (lower(creator) text_pattern_ops);
CREATE TABLE catalog_tags (
    tag TEXT PRIMARY KEY,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX catalog_tags_lower_idx ON catalog_tags (lower(tag) text_pattern_ops);

CREATE FUNCTION hoard_catalog_names() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(NEW.creator, '') <> '' THEN
        INSERT INTO catalog_creators (creator) VALUES (NEW.creator) ON CONFLICT DO NOTHING;
    END IF;
    INSERT INTO catalog_tags (tag) SELECT DISTINCT t FROM unnest(NEW.tags) AS t WHERE t <> '' ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;
CREATE TRIGGER packages_catalog_names
    AFTER INSERT OR UPDATE OF creator, tags ON packages
    FOR EACH ROW EXECUTE FUNCTION hoard_catalog_names();

INSERT INTO catalog_creators (creator) SELECT DISTINCT creator FROM packages WHERE coalesce(creator, '') <> '' ON CONFLICT DO NOTHING;
INSERT INTO catalog_tags (tag) SELECT DISTINCT t FROM packages, unnest(tags) AS t WHERE t <> '' ON CONFLICT DO NOTHING;
