-- The resume point of a part's upload, kept on its row so that an upload
-- stopped by a long FLOOD_WAIT (the job snoozes), a failed attempt or a
-- killed worker continues from the parts the platform already stores
-- instead of from part 0: the upload's file id (chosen by the client), how
-- many leading parts of it are stored, and when that was recorded (the
-- platform keeps uploaded parts between several minutes and several hours;
-- an older point is not worth trying).
ALTER TABLE transfer_parts
    ADD COLUMN upload_file_id    BIGINT,
    ADD COLUMN upload_parts_done INTEGER CHECK (upload_parts_done >= 0),
    ADD COLUMN upload_saved_at   TIMESTAMPTZ,
    ADD CONSTRAINT transfer_parts_upload_resume_check
        CHECK ((upload_file_id IS NULL) = (upload_parts_done IS NULL) AND (upload_file_id IS NULL) = (upload_saved_at IS NULL));
