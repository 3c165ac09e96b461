-- Placeholder for migration 025 (reserved for the floods branch's
-- 025_partial_scan.sql, landing at the same time), so that this branch's
-- migrations are contiguous. Drop this file when the real 025 is merged.
SELECT 1;
