-- Placeholder for migration 012 (reserved for the harden-web branch), so that
-- this branch's migrations are contiguous. Drop this file when the real 012
-- is merged.
SELECT 1;
