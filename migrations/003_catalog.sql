-- Ingestion runs, packages, their file listings, groups and learned grouping
-- rules, and full-text search over packages.

CREATE TABLE ingestion_runs (
    id                             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    status                         TEXT        NOT NULL DEFAULT 'RUNNING'
        CHECK (status IN ('RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED')),
    trigger                        TEXT        NOT NULL DEFAULT 'SCHEDULE' CHECK (trigger IN ('SCHEDULE', 'MANUAL', 'DEMO')),
    current_activity               TEXT        NOT NULL DEFAULT '',
    current_step                   TEXT        NOT NULL DEFAULT '',
    current_channel_id             BIGINT,
    current_topic_id               BIGINT,
    current_account_channel_map_id BIGINT      REFERENCES account_channel_maps (id) ON DELETE SET NULL,
    current_file                   TEXT        NOT NULL DEFAULT '',
    current_bytes                  BIGINT      NOT NULL DEFAULT 0,
    current_total_bytes            BIGINT      NOT NULL DEFAULT 0,
    messages_scanned               INTEGER     NOT NULL DEFAULT 0,
    archives_found                 INTEGER     NOT NULL DEFAULT 0,
    duplicates                     INTEGER     NOT NULL DEFAULT 0,
    ingested                       INTEGER     NOT NULL DEFAULT 0,
    skipped                        INTEGER     NOT NULL DEFAULT 0,
    error_message                  TEXT        NOT NULL DEFAULT '',
    started_at                     TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at                     TIMESTAMPTZ NOT NULL DEFAULT now(),
    finished_at                    TIMESTAMPTZ,
    CHECK ((status = 'RUNNING') = (finished_at IS NULL))
);
-- At most one cycle is active at a time.
CREATE UNIQUE INDEX ingestion_runs_one_running_idx ON ingestion_runs ((true)) WHERE status = 'RUNNING';
CREATE INDEX ingestion_runs_started_at_idx ON ingestion_runs (started_at DESC);

CREATE TABLE package_groups (
    id                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name              TEXT        NOT NULL CHECK (length(name) BETWEEN 1 AND 512),
    grouping_source   TEXT        NOT NULL DEFAULT 'MANUAL'
        CHECK (grouping_source IN ('ALBUM', 'MANUAL', 'AUTO_TIME', 'AUTO_PATTERN', 'AUTO_CREATOR', 'AUTO_REPLY', 'AUTO_ZIP', 'AUTO_CAPTION')),
    -- The signal's key (album id, date pattern, creator, root folder, …) so
    -- that later packages with the same key join the group.
    grouping_key      TEXT,
    source_channel_id BIGINT      REFERENCES messenger_channels (id) ON DELETE SET NULL,
    preview_data      BYTEA,
    created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at        TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- NULLS NOT DISTINCT: groups of manual uploads have no channel and must not
-- repeat a key either (PostgreSQL 15+).
CREATE UNIQUE INDEX package_groups_key_idx ON package_groups (source_channel_id, grouping_source, grouping_key)
    NULLS NOT DISTINCT WHERE grouping_key IS NOT NULL;
CREATE INDEX package_groups_name_trgm_idx ON package_groups USING gin (name gin_trgm_ops);

-- Rules learned from manual group creation; they belong to the group that
-- taught them and move with it on merge.
CREATE TABLE grouping_rules (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    group_id    BIGINT      NOT NULL REFERENCES package_groups (id) ON DELETE CASCADE,
    channel_id  BIGINT      REFERENCES messenger_channels (id) ON DELETE CASCADE,
    pattern     TEXT        NOT NULL CHECK (length(pattern) BETWEEN 1 AND 512),
    signal_type TEXT        NOT NULL CHECK (signal_type IN ('PREFIX', 'CREATOR')),
    confidence  REAL        NOT NULL DEFAULT 1.0 CHECK (confidence > 0 AND confidence <= 1),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (group_id, signal_type, pattern)
);
CREATE INDEX grouping_rules_channel_id_idx ON grouping_rules (channel_id);

-- hoard_search_text splits file names into words before to_tsvector: camel
-- case, underscores, dots and dashes become word breaks, so that
-- "Dragon_Bust_v2.stl" is found by "dragon bust". The query side applies the
-- same rules (store/search.go).
CREATE FUNCTION hoard_search_text(t TEXT) RETURNS TEXT
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT regexp_replace(
               regexp_replace(
                   regexp_replace(t, '([[:lower:][:digit:]])([[:upper:]])', '\1 \2', 'g'),
                   '([[:upper:]])([[:upper:]][[:lower:]])', '\1 \2', 'g'),
               '[^[:alnum:]]+', ' ', 'g')
$$;

CREATE TABLE packages (
    id                  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    file_name           TEXT        NOT NULL CHECK (length(file_name) BETWEEN 1 AND 1024),
    file_size           BIGINT      NOT NULL CHECK (file_size >= 0),
    archive_type        TEXT        NOT NULL CHECK (archive_type IN ('ZIP', 'RAR', '7Z', 'DOCUMENT')),
    -- Hex SHA-256 over the bytes of all source parts in order. NULL only for
    -- rows rebuilt from the destination, whose bytes were never read.
    content_hash        TEXT        CHECK (content_hash ~ '^[0-9a-f]{64}$'),
    part_count          INTEGER     NOT NULL DEFAULT 1 CHECK (part_count >= 1),
    file_count          INTEGER     NOT NULL DEFAULT 0 CHECK (file_count >= 0),
    creator             TEXT,
    tags                TEXT[]      NOT NULL DEFAULT '{}',
    source_channel_id   BIGINT      REFERENCES messenger_channels (id) ON DELETE SET NULL,
    source_message_id   BIGINT,
    source_message_ids  BIGINT[]    NOT NULL DEFAULT '{}',
    source_topic_id     BIGINT,
    source_caption      TEXT,
    source_posted_at    TIMESTAMPTZ,
    reply_to_message_id BIGINT,
    media_album_id      BIGINT,
    remote_unique_id    TEXT,
    dest_channel_id     BIGINT      REFERENCES messenger_channels (id) ON DELETE SET NULL,
    dest_message_id     BIGINT,
    dest_message_ids    BIGINT[]    NOT NULL DEFAULT '{}',
    preview_data        BYTEA,
    preview_msg_id      BIGINT,
    -- Lists read this instead of the preview bytes.
    has_preview         BOOLEAN     GENERATED ALWAYS AS (preview_data IS NOT NULL) STORED,
    inspection_note     TEXT        NOT NULL DEFAULT '',
    package_group_id    BIGINT      REFERENCES package_groups (id) ON DELETE SET NULL,
    ingestion_run_id    BIGINT      REFERENCES ingestion_runs (id) ON DELETE SET NULL,
    search_vector       TSVECTOR    NOT NULL DEFAULT ''::tsvector,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at          TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX packages_content_hash_idx ON packages (content_hash) WHERE content_hash IS NOT NULL;
CREATE INDEX packages_remote_unique_id_idx ON packages (source_channel_id, remote_unique_id) WHERE remote_unique_id IS NOT NULL;
CREATE INDEX packages_source_message_idx ON packages (source_channel_id, source_message_id);
CREATE INDEX packages_source_message_ids_idx ON packages USING gin (source_message_ids);
CREATE INDEX packages_name_size_idx ON packages (file_name, file_size);
CREATE INDEX packages_group_idx ON packages (package_group_id) WHERE package_group_id IS NOT NULL;
CREATE INDEX packages_ungrouped_idx ON packages (created_at DESC, id DESC) WHERE package_group_id IS NULL;
CREATE INDEX packages_created_at_idx ON packages (created_at DESC, id DESC);
CREATE INDEX packages_channel_created_idx ON packages (source_channel_id, created_at DESC);
CREATE INDEX packages_dest_idx ON packages (dest_channel_id, dest_message_id);
-- Serves the creator filter newest first (and gives the planner statistics
-- on lower(creator); a partial expression index would not).
CREATE INDEX packages_creator_idx ON packages (lower(creator), created_at DESC, id DESC);
CREATE INDEX packages_tags_idx ON packages USING gin (tags);
-- fastupdate off: packages arrive one at a time, and a pending list makes
-- the planner fall back to sequential scans until the next vacuum.
CREATE INDEX packages_search_vector_idx ON packages USING gin (search_vector) WITH (fastupdate = off);
CREATE INDEX packages_file_name_trgm_idx ON packages USING gin (file_name gin_trgm_ops) WITH (fastupdate = off);

-- search_vector: name (A) > creator and tags (B) > caption (C).
CREATE FUNCTION packages_search_vector_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_vector :=
        setweight(to_tsvector('english', coalesce(hoard_search_text(NEW.file_name), '')), 'A') ||
        setweight(to_tsvector('english', coalesce(hoard_search_text(NEW.creator), '')), 'B') ||
        setweight(to_tsvector('english', coalesce(hoard_search_text(array_to_string(NEW.tags, ' ')), '')), 'B') ||
        setweight(to_tsvector('english', coalesce(NEW.source_caption, '')), 'C');
    RETURN NEW;
END
$$;
CREATE TRIGGER packages_search_vector_trg
    BEFORE INSERT OR UPDATE OF file_name, creator, tags, source_caption ON packages
    FOR EACH ROW EXECUTE FUNCTION packages_search_vector_update();

-- Entries inside a package's archive (one row for DOCUMENT and 7Z packages).
CREATE TABLE package_files (
    id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    package_id      BIGINT      NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
    ordinal         INTEGER     NOT NULL,
    path            TEXT        NOT NULL,
    file_name       TEXT        NOT NULL,
    extension       TEXT        NOT NULL DEFAULT '',
    size            BIGINT      NOT NULL DEFAULT 0,
    compressed_size BIGINT      NOT NULL DEFAULT 0,
    crc32           BIGINT      CHECK (crc32 BETWEEN 0 AND 4294967295),
    UNIQUE (package_id, ordinal)
);
CREATE INDEX package_files_path_trgm_idx ON package_files USING gin (path gin_trgm_ops);
