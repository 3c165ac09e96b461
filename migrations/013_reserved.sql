-- Placeholder for migration 013 (reserved for the harden-ingest branch), so
-- that this branch's migrations are contiguous. Drop this file when the real
-- 013 is merged.
SELECT 1;
