-- Two tables hold state that is only worth keeping while PostgreSQL runs:
-- the token buckets of the rate limits (rate_limits) and the paging state
-- behind the bot's Prev/Next buttons (bot_search_pages). Both are written
-- by every message the bot sends or search it answers, each write its own
-- commit, and a logged commit waits for its WAL to reach the disk: 20
-- answers at once queued one behind the other on the bot's overall bucket,
-- each holding the row until its flush (issue #14).
--
-- Unlogged, a commit that wrote only them does not wait for the disk.
-- After a crash of PostgreSQL (not of hoard) they start empty: the buckets
-- full, as after a quiet second, so at most one burst more than the limits
-- allow goes out, and the platform's FLOOD_WAIT is handled as usual; old
-- Prev/Next buttons say their search expired and to search again.
ALTER TABLE rate_limits SET UNLOGGED;
ALTER TABLE bot_search_pages SET UNLOGGED;
