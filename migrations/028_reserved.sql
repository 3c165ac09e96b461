-- Placeholder for migration 028 (reserved for a branch landing now), so that
-- the holes branch's migrations are contiguous. Drop this file when the real
-- 028 is merged.
SELECT 1;
