-- A scan reads a long history page by page and commits each page as it
-- goes: what the page found becomes ingest_message jobs and the watermark
-- moves (issue 25). When a flood wait, a crash or a restart interrupts the
-- scan, the run that finishes it must still count what the pages committed
-- before had found, for the cold-channel backoff (SPEC rule 18).
-- partial_scan_found remembers it until a scan finishes and records its
-- scan state.
ALTER TABLE account_channel_maps ADD COLUMN partial_scan_found boolean NOT NULL DEFAULT false;
ALTER TABLE topic_progress ADD COLUMN partial_scan_found boolean NOT NULL DEFAULT false;
