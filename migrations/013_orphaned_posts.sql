-- Orphaned destination posts (issue #13): the audit reads the destination
-- channel's history since its last high-water mark and reports every
-- document that no package (packages_dest_message_ids_idx) and no
-- publication in flight points to. Transfer parts get an index on their
-- posted message for that lookup.

ALTER TABLE system_notifications DROP CONSTRAINT system_notifications_type_check;
ALTER TABLE system_notifications ADD CONSTRAINT system_notifications_type_check
    CHECK (type IN ('HASH_MISMATCH', 'MISSING_PART', 'GROUPING_CONFLICT', 'CHANNEL_ACCESS_LOST', 'UPLOAD_FAILED',
                    'DOWNLOAD_FAILED', 'ORPHANED_INDEX', 'ORPHANED_POST'));

CREATE INDEX transfer_parts_dest_message_idx ON transfer_parts (dest_message_id) WHERE dest_message_id IS NOT NULL;
