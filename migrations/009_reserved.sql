-- Placeholder for version 9; it changes nothing. tern numbers migrations
-- contiguously from 1, so 010_preview_extractions.sql cannot load without
-- a 9, and another branch is adding the real one (009_preview_requests.sql).
-- The merge that brings both keeps the real 009 and deletes this file; it
-- must happen before this branch reaches a database that is kept, because
-- a database that ran this placeholder would never run the real 009.
SELECT 1;
