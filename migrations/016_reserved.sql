-- Placeholder for migration 016 (reserved for a branch landing now), so that
-- the oidc branch's migrations are contiguous. Drop this file when the real
-- 016 is merged.
SELECT 1;
