-- Placeholder for migration 015 (reserved for a branch landing now), so that
-- the oidc branch's migrations are contiguous. Drop this file when the real
-- 015 is merged.
SELECT 1;
