-- A search with a creator filter looks up the packages whose paths hold
-- its text too, while the words' matches do not fill the candidates
-- (issue #30). The lookup could not filter on the creator: it read the
-- newest 200 packages of any creator whose paths held the text and kept
-- the creator's few among them ("cordun" with the most prolific creator:
-- 9,200 chunks tested to keep 20, 12–25 ms at 1,000,000 packages), and it
-- missed the creator's older matches.
--
-- Each chunk now carries its package's lower-cased creator, and one GIN
-- index holds the creator and the paths' trigrams (btree_gin, 022): the
-- creator's chunks that may hold the text are intersected in the index
-- before a row is read. A lookup without a creator reads the same index
-- by its paths alone, as it read the trigram index it replaces.
ALTER TABLE package_paths ADD COLUMN creator TEXT COLLATE "C";

UPDATE package_paths pp SET creator = lower(p.creator)
FROM packages p WHERE p.id = pp.package_id AND p.creator IS NOT NULL;

DROP INDEX package_paths_trgm_idx;
CREATE INDEX package_paths_creator_trgm_idx ON package_paths USING gin (creator, paths gin_trgm_ops);

-- Where most of a creator's chunks hold the text's trigrams (a fragment
-- common to one part of every model, "arm_left_07"), the index above
-- lists nearly all of them, and the search walks the creator's chunks
-- newest first instead, a batch at a time (store/search.sql, "paths").
CREATE INDEX package_paths_creator_idx ON package_paths (creator, package_id, chunk);

-- hoard_package_paths_of rebuilds the chunks of the given packages from
-- their entries, with their packages' creators.
CREATE OR REPLACE FUNCTION hoard_package_paths_of(ids BIGINT[]) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM package_paths WHERE package_id = ANY (ids);
    INSERT INTO package_paths (package_id, chunk, paths, creator)
    SELECT f.package_id, f.ordinal / 256, lower(string_agg(f.path, E'\n' ORDER BY f.ordinal)), lower(min(p.creator))
    FROM package_files f JOIN packages p ON p.id = f.package_id
    WHERE f.package_id = ANY (ids)
    GROUP BY f.package_id, f.ordinal / 256;
$$;

-- A package's new creator, by whoever sets it, reaches its chunks.
CREATE FUNCTION hoard_package_paths_creator() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE package_paths SET creator = lower(NEW.creator) WHERE package_id = NEW.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER packages_paths_creator AFTER UPDATE OF creator ON packages
    FOR EACH ROW WHEN (lower(OLD.creator) IS DISTINCT FROM lower(NEW.creator))
    EXECUTE FUNCTION hoard_package_paths_creator();

ANALYZE package_paths;
