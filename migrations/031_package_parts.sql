-- What a package is served as from the browser and WebDAV (issue #27):
-- the posts of the destination channel that hold it, with the name and
-- size each was posted under, learned from the platform on the first
-- download (one request) and kept, so that listings, sizes and later
-- downloads need no platform request. Rows belong to the destination
-- posts they name: a repaired package (new posts) learns its parts anew.
CREATE TABLE package_parts (
    package_id      BIGINT NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
    part_no         INT    NOT NULL CHECK (part_no >= 1),
    dest_message_id BIGINT NOT NULL,
    name            TEXT   NOT NULL,
    size            BIGINT NOT NULL CHECK (size >= 0),
    PRIMARY KEY (package_id, part_no)
);

-- The CRC-32 of a served file (part_no 0: the whole package, its parts
-- joined; N: the N-th volume), computed the first time its bytes were
-- read in full: a group's ZIP states it without reading the file again.
-- dest_message_ids are the posts it was computed from.
CREATE TABLE package_checksums (
    package_id       BIGINT   NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
    part_no          INT      NOT NULL CHECK (part_no >= 0),
    dest_message_ids BIGINT[] NOT NULL,
    crc32            BIGINT   NOT NULL CHECK (crc32 BETWEEN 0 AND 4294967295),
    PRIMARY KEY (package_id, part_no)
);
