-- Crowdfund hosts belong to their user (issue #26): every user's host filter
-- and suggestions listed the hosts any user had typed. Each existing host
-- row goes to the users whose records use it: the user with the lowest id
-- keeps the row, every other one gets a copy of it (same name, url and
-- creation time) and their records point at the copy; a host used by two
-- users becomes two rows. A host no record uses belongs to nobody and goes.

DROP INDEX crowdfund_hosts_name_idx;
ALTER TABLE crowdfund_hosts
    ADD COLUMN user_id BIGINT REFERENCES users (id) ON DELETE CASCADE,
    ADD COLUMN copied_from BIGINT; -- only while this migration runs

UPDATE crowdfund_hosts h SET user_id = k.keeper
FROM (SELECT host_id, min(user_id) AS keeper FROM crowdfunds WHERE host_id IS NOT NULL GROUP BY host_id) k
WHERE h.id = k.host_id;

INSERT INTO crowdfund_hosts (name, url, created_at, user_id, copied_from)
SELECT h.name, h.url, h.created_at, u.user_id, h.id
FROM crowdfund_hosts h
JOIN (SELECT DISTINCT host_id, user_id FROM crowdfunds WHERE host_id IS NOT NULL) u ON u.host_id = h.id
WHERE u.user_id <> h.user_id;

UPDATE crowdfunds c SET host_id = h.id
FROM crowdfund_hosts h
WHERE h.copied_from = c.host_id AND h.user_id = c.user_id;

DELETE FROM crowdfund_hosts WHERE user_id IS NULL;

ALTER TABLE crowdfund_hosts
    DROP COLUMN copied_from,
    ALTER COLUMN user_id SET NOT NULL;
CREATE UNIQUE INDEX crowdfund_hosts_user_name_idx ON crowdfund_hosts (user_id, lower(name));
-- A record's host is one of its user's own: the key includes the user.
CREATE UNIQUE INDEX crowdfund_hosts_id_user_idx ON crowdfund_hosts (id, user_id);
ALTER TABLE crowdfunds
    DROP CONSTRAINT crowdfunds_host_id_fkey,
    ADD CONSTRAINT crowdfunds_host_user_fkey FOREIGN KEY (host_id, user_id)
        REFERENCES crowdfund_hosts (id, user_id) ON DELETE SET NULL (host_id);
