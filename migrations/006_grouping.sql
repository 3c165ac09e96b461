-- Grouping state kept between runs of the grouping job: packages a user took
-- out of their group, and the conflict pairs already reported.

-- A package a user removed from a group (or whose group they dissolved) is
-- never placed by automatic grouping again; placing it in a manual group
-- clears the flag.
ALTER TABLE packages ADD COLUMN keep_ungrouped BOOLEAN NOT NULL DEFAULT false;

-- The packages of a channel that automatic grouping may still place: the
-- grouping job loads their archive paths.
CREATE INDEX packages_channel_placeable_idx ON packages (source_channel_id, id)
    WHERE package_group_id IS NULL AND NOT keep_ungrouped;

-- Grouped packages of a channel by post time: the grouping job loads those
-- posted within the time window of a placeable package.
CREATE INDEX packages_channel_grouped_posted_idx ON packages (source_channel_id, source_posted_at)
    WHERE package_group_id IS NOT NULL;

-- Groups of a channel, newest first (group lists, the grouping job), and the
-- index the ON DELETE SET NULL of source_channel_id needs.
CREATE INDEX package_groups_channel_idx ON package_groups (source_channel_id, id);

-- Every pair of groups a GROUPING_CONFLICT was ever raised for. Notifications
-- are dismissed and later cleaned up; this row stays as long as both groups
-- exist, so a dismissed conflict is never raised again.
CREATE TABLE grouping_conflicts (
    group_a     BIGINT      NOT NULL REFERENCES package_groups (id) ON DELETE CASCADE,
    group_b     BIGINT      NOT NULL REFERENCES package_groups (id) ON DELETE CASCADE,
    notified_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (group_a, group_b),
    CHECK (group_a < group_b)
);
CREATE INDEX grouping_conflicts_group_b_idx ON grouping_conflicts (group_b);
