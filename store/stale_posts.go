package store

import "context"

// StalePost is a destination message a repaired package was published as
// before its repair (ClearPackageDestination kept it).
type StalePost struct {
	DestChannelID int64
	MessageID     int64
}

// ListStalePosts returns a package's stale posts in message order.
func (db *DB) ListStalePosts(ctx context.Context, packageID int64) ([]StalePost, error) {
	return getAll[StalePost](ctx, db.q, "list stale posts",
		`SELECT dest_channel_id, message_id FROM stale_destination_posts WHERE package_id = $1
		 ORDER BY dest_channel_id, message_id`, packageID)
}

// ForgetStalePosts removes stale posts of a package once they are deleted
// from the destination (or kept on purpose: they are the package's posts
// again).
func (db *DB) ForgetStalePosts(ctx context.Context, packageID int64, posts []StalePost) error {
	if len(posts) == 0 {
		return nil
	}
	chans, ids := make([]int64, len(posts)), make([]int64, len(posts))
	for i, p := range posts {
		chans[i], ids[i] = p.DestChannelID, p.MessageID
	}
	_, err := db.q.Exec(ctx, `DELETE FROM stale_destination_posts s USING unnest($2::bigint[], $3::bigint[]) AS u(c, m)
		WHERE s.package_id = $1 AND s.dest_channel_id = u.c AND s.message_id = u.m`, packageID, chans, ids)
	return wrap("forget stale posts", err)
}
