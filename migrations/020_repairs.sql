-- Repairs (issue #15): a repair forgets where a package was published so
-- that the next cycle publishes it again into the same row. The messages it
-- forgot are kept here until the new publication is verified; then they are
-- deleted from the destination (never the only copy of the package).
CREATE TABLE stale_destination_posts (
    dest_channel_id BIGINT NOT NULL,
    message_id      BIGINT NOT NULL,
    package_id      BIGINT NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (dest_channel_id, message_id)
);
CREATE INDEX stale_destination_posts_package_idx ON stale_destination_posts (package_id);

-- A run's counters add up (issue #15): found = new + duplicates + skipped +
-- held back. Held back are the sets a scan found but left for a later cycle
-- (still settling, or their topic or channel switched off meanwhile).
ALTER TABLE ingestion_runs ADD COLUMN held_back INTEGER NOT NULL DEFAULT 0;
