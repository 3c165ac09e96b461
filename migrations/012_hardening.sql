-- Hardening against hostile input (issue #13).
--
-- A btree index entry holds at most about 2,700 bytes, and archives name
-- entries with paths far longer than that: "one unfinished extraction per
-- package and entry" indexed the path itself, so choosing such an entry as
-- the preview failed ("index row size exceeds btree maximum"). The rule now
-- indexes the path's MD5; lookups compare the hash and then the path.
DROP INDEX preview_extractions_unfinished_idx;
CREATE UNIQUE INDEX preview_extractions_unfinished_idx ON preview_extractions (package_id, md5(entry_path))
    WHERE status IN ('PENDING', 'RUNNING');
