-- Placeholder for migration 015 (reserved for a branch landing in parallel),
-- so that this branch's migrations are contiguous. Drop this file when the
-- real 015 is merged.
SELECT 1;
