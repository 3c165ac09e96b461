-- A search by words with a creator filter (issue #16): the text's index
-- found a middle-frequency word's few thousand packages and each was read
-- to test its creator (some 15 ms at 1,000,000 packages), or the creator's
-- index, for a prolific creator tens of thousands of rows. One GIN index on
-- both (btree_gin gives GIN the creator's equality) finds the few packages
-- that satisfy both before any row is read. A GIN index on several columns
-- serves a condition on any of them as well as one on that column alone,
-- so it replaces the index on search_vector.
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX packages_creator_search_idx ON packages USING gin (lower(creator), search_vector) WITH (fastupdate = off);
DROP INDEX packages_search_vector_idx;
