-- The catalog experience (issue #16).

-- Learning a manual group's rule may decline the rule it found, because it
-- would also match packages of other groups: the group keeps what it
-- declined and why, for its page to say so and offer it anyway.
ALTER TABLE package_groups
    ADD COLUMN declined_rule_signal  TEXT CHECK (declined_rule_signal IN ('PREFIX', 'CREATOR')),
    ADD COLUMN declined_rule_pattern TEXT CHECK (char_length(declined_rule_pattern) <= 512),
    ADD COLUMN declined_rule_note    TEXT CHECK (char_length(declined_rule_note) <= 2000);

-- A grouping conflict's notification goes away with either of its groups
-- (merged into another, dissolved, emptied), however the group is deleted.
CREATE INDEX system_notifications_conflict_a_idx ON system_notifications (((context->>'group_a')::bigint))
    WHERE type = 'GROUPING_CONFLICT' AND NOT dismissed;
CREATE INDEX system_notifications_conflict_b_idx ON system_notifications (((context->>'group_b')::bigint))
    WHERE type = 'GROUPING_CONFLICT' AND NOT dismissed;

CREATE FUNCTION hoard_dismiss_group_conflicts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE system_notifications n SET dismissed = true, dismissed_at = now()
    FROM gone
    WHERE n.type = 'GROUPING_CONFLICT' AND NOT n.dismissed
        AND ((n.context->>'group_a')::bigint = gone.id OR (n.context->>'group_b')::bigint = gone.id);
    RETURN NULL;
END $$;

CREATE TRIGGER package_groups_dismiss_conflicts AFTER DELETE ON package_groups
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION hoard_dismiss_group_conflicts();
