-- Every package written adds its creator and tags to catalog_creators and
-- catalog_tags (019), each insert waiting on a name another transaction
-- has inserted and not yet committed. The tags went in the order DISTINCT
-- happened to produce, so two transactions writing the same tags in
-- different orders could each hold one the other waits for: a deadlock
-- (seen in the store's parallel tests, which keep their transactions open).
-- In byte order, every transaction takes the names of one row in the same
-- order.
CREATE OR REPLACE FUNCTION hoard_catalog_names() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(NEW.creator, '') <> '' THEN
        INSERT INTO catalog_creators (creator) VALUES (NEW.creator) ON CONFLICT DO NOTHING;
    END IF;
    INSERT INTO catalog_tags (tag)
    SELECT DISTINCT t COLLATE "C" FROM unnest(NEW.tags) AS t WHERE t <> '' ORDER BY 1
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;
