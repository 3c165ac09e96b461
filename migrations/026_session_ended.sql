-- A messenger account the platform signed out (issue #25): a revoked
-- session, or one used from two places at once (406 AUTH_KEY_DUPLICATED)
-- is told to the administrators with a notification of its own.

ALTER TABLE system_notifications DROP CONSTRAINT system_notifications_type_check;
ALTER TABLE system_notifications ADD CONSTRAINT system_notifications_type_check
    CHECK (type IN ('HASH_MISMATCH', 'MISSING_PART', 'GROUPING_CONFLICT', 'CHANNEL_ACCESS_LOST', 'UPLOAD_FAILED',
                    'DOWNLOAD_FAILED', 'ORPHANED_INDEX', 'ORPHANED_POST', 'SESSION_ENDED'));
