-- The catalog search finds packages by the paths inside their archives
-- (issue #16). Looking the newest 200 such packages up in package_files
-- reads every matching entry: a fragment common to one part of every model
-- ("arm_left_07") matches ten thousand entries, and its trigrams' lists in
-- the index are long. package_paths holds each package's paths joined by
-- newlines and lower-cased, in chunks of at most 256 entries (so that one
-- huge listing stays many small rows): a fragment's matches are counted in
-- packages, not entries, and the trigrams of a package's many similar
-- paths are listed once. Lower-cased, the chunks are matched with LIKE,
-- which compares bytes, where ILIKE would lower-case every chunk it tests.
-- The listing itself, and which files matched, stay in package_files.
CREATE TABLE package_paths (
    package_id BIGINT  NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
    chunk      INTEGER NOT NULL,
    paths      TEXT    NOT NULL,
    PRIMARY KEY (package_id, chunk)
);
CREATE INDEX package_paths_trgm_idx ON package_paths USING gin (paths gin_trgm_ops);

-- hoard_package_paths_of rebuilds the chunks of the given packages from
-- their entries.
CREATE FUNCTION hoard_package_paths_of(ids BIGINT[]) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM package_paths WHERE package_id = ANY (ids);
    INSERT INTO package_paths (package_id, chunk, paths)
    SELECT package_id, ordinal / 256, lower(string_agg(path, E'\n' ORDER BY ordinal))
    FROM package_files WHERE package_id = ANY (ids)
    GROUP BY package_id, ordinal / 256;
$$;

-- Every change to package_files, by whoever makes it, keeps the chunks of
-- the packages it touched in step: one statement trigger per kind of
-- change, each with the rows it changed.
CREATE FUNCTION hoard_package_paths() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM hoard_package_paths_of(ARRAY(SELECT DISTINCT package_id FROM new_files));
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM hoard_package_paths_of(ARRAY(SELECT DISTINCT package_id FROM old_files));
    ELSE
        PERFORM hoard_package_paths_of(ARRAY(SELECT package_id FROM old_files UNION SELECT package_id FROM new_files));
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER package_files_paths_insert AFTER INSERT ON package_files
    REFERENCING NEW TABLE AS new_files FOR EACH STATEMENT EXECUTE FUNCTION hoard_package_paths();
CREATE TRIGGER package_files_paths_delete AFTER DELETE ON package_files
    REFERENCING OLD TABLE AS old_files FOR EACH STATEMENT EXECUTE FUNCTION hoard_package_paths();
CREATE TRIGGER package_files_paths_update AFTER UPDATE ON package_files
    REFERENCING OLD TABLE AS old_files NEW TABLE AS new_files FOR EACH STATEMENT EXECUTE FUNCTION hoard_package_paths();

CREATE FUNCTION hoard_package_paths_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM package_paths;
    RETURN NULL;
END
$$;
CREATE TRIGGER package_files_paths_truncate AFTER TRUNCATE ON package_files
    FOR EACH STATEMENT EXECUTE FUNCTION hoard_package_paths_truncate();

INSERT INTO package_paths (package_id, chunk, paths)
SELECT package_id, ordinal / 256, lower(string_agg(path, E'\n' ORDER BY ordinal))
FROM package_files GROUP BY package_id, ordinal / 256;
ANALYZE package_paths;
