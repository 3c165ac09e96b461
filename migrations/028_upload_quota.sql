-- Uploads bounded (issue #26): the bytes each user holds on the upload
-- volume (files on disk plus uploads streaming in) are counted in one row
-- per user, which a request reserves in one statement, so concurrent
-- requests of a user cannot pass the quota together. Each upload keeps its
-- share of that count, so that deleting it, or the clean-up of a stale
-- one, gives back exactly what it held. A file whose bytes were removed
-- from the volume (retention ran out, it duplicated the catalog, its
-- upload was deleted) has removed_at set.

CREATE TABLE upload_usage (
    user_id    BIGINT      PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    held_bytes BIGINT      NOT NULL DEFAULT 0 CHECK (held_bytes >= 0),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

ALTER TABLE manual_uploads
    ADD COLUMN held_bytes BIGINT NOT NULL DEFAULT 0 CHECK (held_bytes >= 0);

ALTER TABLE manual_upload_files
    ADD COLUMN removed_at TIMESTAMPTZ;

-- What is on the volume today is held by its uploads and their users.
UPDATE manual_uploads u SET held_bytes = s.bytes
    FROM (SELECT upload_id, sum(file_size) AS bytes FROM manual_upload_files GROUP BY upload_id) s
    WHERE s.upload_id = u.id;
INSERT INTO upload_usage (user_id, held_bytes)
    SELECT user_id, sum(held_bytes) FROM manual_uploads WHERE user_id IS NOT NULL GROUP BY user_id;

-- The clean-up's question: which published files have been kept long enough.
CREATE INDEX manual_upload_files_retained_idx ON manual_upload_files (updated_at)
    WHERE status = 'COMPLETED' AND removed_at IS NULL;

-- A download that waits for disk space tells the administrators.
ALTER TABLE system_notifications DROP CONSTRAINT system_notifications_type_check;
ALTER TABLE system_notifications ADD CONSTRAINT system_notifications_type_check
    CHECK (type IN ('HASH_MISMATCH', 'MISSING_PART', 'GROUPING_CONFLICT', 'CHANNEL_ACCESS_LOST', 'UPLOAD_FAILED',
                    'DOWNLOAD_FAILED', 'ORPHANED_INDEX', 'ORPHANED_POST', 'SESSION_ENDED', 'DISK_LOW'));
