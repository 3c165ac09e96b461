package store

import (
	"context"

	"github.com/hoard/hoard"
)

const groupColumns = `g.id, g.name, g.grouping_source, coalesce(g.grouping_key, '') AS grouping_key,
	coalesce(g.source_channel_id, 0) AS source_channel_id, g.preview_data IS NOT NULL AS has_preview,
	(SELECT count(*) FROM packages p WHERE p.package_group_id = g.id) AS member_count, g.created_at, g.updated_at`

// CreateGroup stores a group and fills g with the stored row. A second
// automatic group with the same channel, source and key is ECONFLICT.
func (db *DB) CreateGroup(ctx context.Context, g *hoard.PackageGroup) error {
	if !g.GroupingSource.Valid() {
		return hoard.Errorf(hoard.EINVALID, "create group: unknown grouping source %q", g.GroupingSource)
	}
	got, err := getOne[hoard.PackageGroup](ctx, db.q, "create group", `
		WITH g AS (INSERT INTO package_groups (name, grouping_source, grouping_key, source_channel_id)
			VALUES ($1, $2, $3, $4) RETURNING *)
		SELECT `+groupColumns+` FROM g`,
		g.Name, string(g.GroupingSource), nullString(g.GroupingKey), nullInt(g.SourceChannelID))
	if err != nil {
		return err
	}
	*g = *got
	return nil
}

// FindGroupByID returns a group with its member count.
func (db *DB) FindGroupByID(ctx context.Context, id int64) (*hoard.PackageGroup, error) {
	return getOne[hoard.PackageGroup](ctx, db.q, "find group", `SELECT `+groupColumns+` FROM package_groups g WHERE g.id = $1`, id)
}
