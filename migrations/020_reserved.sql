-- Placeholder for migration 020 (reserved for branches landing with issue #15), so that
-- this branch's 022 is contiguous. The lead renumbers at merge time.
SELECT 1;
