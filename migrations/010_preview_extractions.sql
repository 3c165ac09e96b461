-- Previews chosen from the archive contents and extracted on demand (SPEC
-- rule 10): one row per request, the status the package page polls while
-- the extract_preview job fetches the entry and makes the thumbnail.

CREATE TABLE preview_extractions (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    package_id       BIGINT      NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
    -- The entry's path inside the archive, as listed in package_files.
    entry_path       TEXT        NOT NULL CHECK (length(entry_path) BETWEEN 1 AND 4096),
    status           TEXT        NOT NULL DEFAULT 'PENDING'
        CHECK (status IN ('PENDING', 'RUNNING', 'DONE', 'FAILED')),
    -- How the bytes were fetched: 'ranged' (the entry's bytes only) or
    -- 'whole' (the archive, within the byte budget); '' until decided.
    method           TEXT        NOT NULL DEFAULT '' CHECK (method IN ('', 'ranged', 'whole')),
    bytes_downloaded BIGINT      NOT NULL DEFAULT 0 CHECK (bytes_downloaded >= 0),
    error_message    TEXT        NOT NULL DEFAULT '',
    requested_by     BIGINT      REFERENCES users (id) ON DELETE SET NULL,
    river_job_id     BIGINT,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at      TIMESTAMPTZ,
    CHECK ((status IN ('DONE', 'FAILED')) = (finished_at IS NOT NULL))
);
CREATE INDEX preview_extractions_package_idx ON preview_extractions (package_id, created_at DESC);
-- At most one unfinished extraction per package and entry, like its job.
CREATE UNIQUE INDEX preview_extractions_unfinished_idx ON preview_extractions (package_id, entry_path)
    WHERE status IN ('PENDING', 'RUNNING');
