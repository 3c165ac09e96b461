package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hoard/hoard"
)

// packageColumns selects a package without its preview bytes; nullable
// columns read as Go zero values.
const packageColumns = `id, file_name, file_size, archive_type, coalesce(content_hash, '') AS content_hash,
	part_count, file_count, coalesce(creator, '') AS creator, tags,
	coalesce(source_channel_id, 0) AS source_channel_id, coalesce(source_message_id, 0) AS source_message_id,
	source_message_ids, coalesce(source_topic_id, 0) AS source_topic_id, coalesce(source_caption, '') AS source_caption,
	coalesce(source_posted_at, '0001-01-01 00:00:00+00') AS source_posted_at,
	coalesce(reply_to_message_id, 0) AS reply_to_message_id, coalesce(media_album_id, 0) AS media_album_id,
	coalesce(remote_unique_id, '') AS remote_unique_id, coalesce(dest_channel_id, 0) AS dest_channel_id,
	coalesce(dest_message_id, 0) AS dest_message_id, dest_message_ids, coalesce(preview_msg_id, 0) AS preview_msg_id,
	has_preview, inspection_note, coalesce(package_group_id, 0) AS package_group_id,
	coalesce(ingestion_run_id, 0) AS ingestion_run_id, created_at, updated_at`

// CreatePackage inserts p (its preview bytes included) and sets p.ID,
// p.CreatedAt, p.UpdatedAt and p.HasPreview. A second package with the same
// content hash is ECONFLICT: content is the last de-duplication rule.
func (db *DB) CreatePackage(ctx context.Context, p *hoard.Package) error {
	if !p.ArchiveType.Valid() {
		return hoard.Errorf(hoard.EINVALID, "create package: unknown archive type %q", p.ArchiveType)
	}
	if p.PartCount == 0 {
		p.PartCount = 1
	}
	err := db.q.QueryRow(ctx, `
		INSERT INTO packages (file_name, file_size, archive_type, content_hash, part_count, file_count, creator, tags,
			source_channel_id, source_message_id, source_message_ids, source_topic_id, source_caption, source_posted_at,
			reply_to_message_id, media_album_id, remote_unique_id, dest_channel_id, dest_message_id, dest_message_ids,
			preview_data, preview_msg_id, inspection_note, package_group_id, ingestion_run_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25)
		RETURNING id, has_preview, created_at, updated_at`,
		p.FileName, p.FileSize, string(p.ArchiveType), nullString(p.ContentHash), p.PartCount, p.FileCount,
		nullString(p.Creator), nonNilStrings(p.Tags), nullInt(p.SourceChannelID), nullInt(p.SourceMessageID),
		nonNilInts(p.SourceMessageIDs), nullInt(p.SourceTopicID), nullString(p.SourceCaption), nullTime(p.SourcePostedAt),
		nullInt(p.ReplyToMessageID), nullInt(p.MediaAlbumID), nullString(p.RemoteUniqueID), nullInt(p.DestChannelID),
		nullInt(p.DestMessageID), nonNilInts(p.DestMessageIDs), p.PreviewData, nullInt(p.PreviewMsgID), p.InspectionNote,
		nullInt(p.PackageGroupID), nullInt(p.IngestionRunID),
	).Scan(&p.ID, &p.HasPreview, &p.CreatedAt, &p.UpdatedAt)
	return wrap("create package", err)
}

// FindPackageByID returns a package without its preview bytes.
func (db *DB) FindPackageByID(ctx context.Context, id int64) (*hoard.Package, error) {
	return getOne[hoard.Package](ctx, db.q, "find package", `SELECT `+packageColumns+` FROM packages WHERE id = $1`, id)
}

// FindPackagesByID returns the packages of ids (without preview bytes) in
// one query, oldest first; ids of no package are left out.
func (db *DB) FindPackagesByID(ctx context.Context, ids []int64) ([]hoard.Package, error) {
	return getAll[hoard.Package](ctx, db.q, "find packages", `SELECT `+packageColumns+` FROM packages WHERE id = ANY($1) ORDER BY id`, ids)
}

// FindPackagePreview returns a package's preview image bytes; ENOTFOUND when
// the package does not exist or has no preview.
func (db *DB) FindPackagePreview(ctx context.Context, id int64) ([]byte, error) {
	var data []byte
	err := db.q.QueryRow(ctx, `SELECT preview_data FROM packages WHERE id = $1 AND preview_data IS NOT NULL`, id).Scan(&data)
	if err != nil {
		return nil, wrap("find package preview", err)
	}
	return data, nil
}

// FindPackageByContentHash returns the package with that content hash
// (de-duplication rule d).
func (db *DB) FindPackageByContentHash(ctx context.Context, hash string) (*hoard.Package, error) {
	return getOne[hoard.Package](ctx, db.q, "find package by hash",
		`SELECT `+packageColumns+` FROM packages WHERE content_hash = $1`, hash)
}

// FindPackageByRemoteUniqueID returns the package of that source channel with
// that platform file id (de-duplication rule a).
func (db *DB) FindPackageByRemoteUniqueID(ctx context.Context, channelID int64, remoteUniqueID string) (*hoard.Package, error) {
	return getOne[hoard.Package](ctx, db.q, "find package by remote id",
		`SELECT `+packageColumns+` FROM packages WHERE source_channel_id = $1 AND remote_unique_id = $2
		 ORDER BY id LIMIT 1`, channelID, remoteUniqueID)
}

// FindPackageBySourceMessage returns the package that indexed that source
// message, as its first part or any other part (de-duplication rule b).
func (db *DB) FindPackageBySourceMessage(ctx context.Context, channelID, messageID int64) (*hoard.Package, error) {
	return getOne[hoard.Package](ctx, db.q, "find package by source message",
		`SELECT `+packageColumns+` FROM packages
		 WHERE (source_channel_id = $1 AND source_message_id = $2)
		    OR (source_message_ids @> ARRAY[$2::bigint] AND source_channel_id = $1)
		 ORDER BY id LIMIT 1`, channelID, messageID)
}

// FindPackageByNameAndSize returns a package with the same file name and total
// size: a repost (de-duplication rule c).
func (db *DB) FindPackageByNameAndSize(ctx context.Context, fileName string, size int64) (*hoard.Package, error) {
	return getOne[hoard.Package](ctx, db.q, "find package by name and size",
		`SELECT `+packageColumns+` FROM packages WHERE file_name = $1 AND file_size = $2 ORDER BY id LIMIT 1`, fileName, size)
}

// SetPackageDestination records where a package was published: the first
// destination message id and every part's id in part order.
func (db *DB) SetPackageDestination(ctx context.Context, id, destChannelID int64, messageIDs []int64) error {
	if len(messageIDs) == 0 {
		return hoard.Errorf(hoard.EINVALID, "set package destination: no message ids")
	}
	tag, err := db.q.Exec(ctx, `UPDATE packages SET dest_channel_id = $2, dest_message_id = $3, dest_message_ids = $4,
		updated_at = now() WHERE id = $1`, id, destChannelID, messageIDs[0], messageIDs)
	return notFoundIfNone("set package destination", tag, err)
}

// ClearPackageDestination forgets where a package was published, so that a
// repair re-publishes it. Group, tags and crowdfund links stay. The
// messages it was published as become the package's stale posts
// (ListStalePosts), deleted once the new publication is verified.
func (db *DB) ClearPackageDestination(ctx context.Context, id int64) error {
	tag, err := db.q.Exec(ctx, `WITH p AS (
			SELECT id, dest_channel_id, dest_message_ids || dest_message_id AS ids FROM packages WHERE id = $1 FOR UPDATE),
		kept AS (
			INSERT INTO stale_destination_posts (dest_channel_id, message_id, package_id)
			SELECT DISTINCT p.dest_channel_id, m, p.id FROM p, unnest(p.ids) AS m
			WHERE p.dest_channel_id IS NOT NULL AND m IS NOT NULL
			ON CONFLICT DO NOTHING)
		UPDATE packages SET dest_channel_id = NULL, dest_message_id = NULL, dest_message_ids = '{}',
		updated_at = now() FROM p WHERE packages.id = p.id`, id)
	return notFoundIfNone("clear package destination", tag, err)
}

// SetPackagePreview stores a preview image and the message it came from
// (msgID 0 when it did not come from a message). nil data removes it.
func (db *DB) SetPackagePreview(ctx context.Context, id int64, data []byte, msgID int64) error {
	tag, err := db.q.Exec(ctx, `UPDATE packages SET preview_data = $2, preview_msg_id = $3, updated_at = now() WHERE id = $1`,
		id, data, nullInt(msgID))
	return notFoundIfNone("set package preview", tag, err)
}

// SetPackageCreator sets or (with "") clears the creator of packages.
func (db *DB) SetPackageCreator(ctx context.Context, ids []int64, creator string) error {
	_, err := db.q.Exec(ctx, `UPDATE packages SET creator = $2, updated_at = now() WHERE id = ANY($1)`,
		ids, nullString(strings.TrimSpace(creator)))
	return wrap("set package creator", err)
}

// TagEdit is a bulk tag change: Set replaces all tags when non-nil, then Add
// and Remove apply. Tags are trimmed; empty ones are dropped. Max, when
// positive, is the most tags an edit may give a package (an edit that adds
// none is always allowed, so a package that somehow has more can shrink).
type TagEdit struct {
	Set    []string
	Add    []string
	Remove []string
	Max    int
}

// EditPackageTags applies a TagEdit to every package in ids, keeping each
// package's tags unique and in order, and returns how many changed. When it
// would give a package more tags than edit.Max (and more than it had), the
// edit is EINVALID and no package changes (one statement).
func (db *DB) EditPackageTags(ctx context.Context, ids []int64, edit TagEdit) (int64, error) {
	clean := func(in []string) []string {
		out := make([]string, 0, len(in))
		for _, t := range in {
			if t = strings.TrimSpace(t); t != "" {
				out = append(out, t)
			}
		}
		return out
	}
	set := edit.Set != nil
	var over, changed int64
	err := db.q.QueryRow(ctx, `
		WITH t AS (
			SELECT p2.id, cardinality(p2.tags) AS had,
				coalesce(array_agg(x.tag ORDER BY x.ord) FILTER (WHERE x.tag IS NOT NULL), '{}') AS tags
			FROM packages p2
			LEFT JOIN LATERAL (
				SELECT tag, min(ord) AS ord FROM unnest(
					(CASE WHEN $2 THEN $3::text[] ELSE p2.tags END) || $4::text[]) WITH ORDINALITY AS u(tag, ord)
				WHERE NOT (tag = ANY($5::text[]))
				GROUP BY tag
			) x ON true
			WHERE p2.id = ANY($1)
			GROUP BY p2.id, p2.tags
		),
		over AS (SELECT count(*) AS n FROM t WHERE $6::int > 0 AND cardinality(t.tags) > $6::int AND cardinality(t.tags) > t.had),
		changed AS (
			UPDATE packages p SET tags = t.tags, updated_at = now()
			FROM t WHERE p.id = t.id AND p.tags IS DISTINCT FROM t.tags AND (SELECT n FROM over) = 0
			RETURNING p.id
		)
		SELECT (SELECT n FROM over), (SELECT count(*) FROM changed)`,
		ids, set, clean(edit.Set), clean(edit.Add), clean(edit.Remove), edit.Max).Scan(&over, &changed)
	if err != nil {
		return 0, wrap("edit package tags", err)
	}
	if over > 0 {
		return 0, hoard.Errorf(hoard.EINVALID, "A package can have at most %d tags; this edit would give %d package(s) more.", edit.Max, over)
	}
	return changed, nil
}

// RetagChannelPackages replaces the category tag of every package of a
// channel (SPEC rule 11): oldTag is removed and newTag added as the first
// tag. Either may be "" (no category before, or none now).
func (db *DB) RetagChannelPackages(ctx context.Context, channelID int64, oldTag, newTag string) (int64, error) {
	tag, err := db.q.Exec(ctx, `
		UPDATE packages SET tags = (CASE WHEN $3 = '' THEN '{}'::text[] ELSE ARRAY[$3] END) ||
			array(SELECT t FROM unnest(tags) WITH ORDINALITY AS u(t, o) WHERE t <> $2 AND t <> $3 ORDER BY o),
			updated_at = now()
		WHERE source_channel_id = $1`, channelID, oldTag, newTag)
	if err != nil {
		return 0, wrap("retag channel packages", err)
	}
	return tag.RowsAffected(), nil
}

// SetPackageGroup moves packages into a group (groupID 0 = ungroup them).
func (db *DB) SetPackageGroup(ctx context.Context, ids []int64, groupID int64) error {
	_, err := db.q.Exec(ctx, `UPDATE packages SET package_group_id = $2, updated_at = now() WHERE id = ANY($1)`,
		ids, nullInt(groupID))
	return wrap("set package group", err)
}

// DeletePackage removes a package and its file listing. It does not touch
// the destination channel.
func (db *DB) DeletePackage(ctx context.Context, id int64) error {
	tag, err := db.q.Exec(ctx, `DELETE FROM packages WHERE id = $1`, id)
	return notFoundIfNone("delete package", tag, err)
}

// PackageCursor is a keyset position in a list ordered newest first.
type PackageCursor struct {
	CreatedAt time.Time
	ID        int64
}

// PackageFilter narrows ListPackages. Zero fields do not filter.
type PackageFilter struct {
	ChannelID   int64
	Ungrouped   bool
	GroupID     int64
	ArchiveType hoard.ArchiveType
	Creator     string   // exact, case-insensitive
	Tags        []string // all must be present
}

// ListPackages returns up to limit packages, newest first, after the cursor
// (nil = from the start), and the cursor of the next page (nil at the end).
func (db *DB) ListPackages(ctx context.Context, f PackageFilter, after *PackageCursor, limit int) ([]hoard.Package, *PackageCursor, error) {
	if limit <= 0 || limit > 500 {
		limit = 50
	}
	where := []string{"true"}
	args := []any{}
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	if f.ChannelID != 0 {
		where = append(where, "source_channel_id = "+arg(f.ChannelID))
	}
	if f.Ungrouped {
		where = append(where, "package_group_id IS NULL")
	}
	if f.GroupID != 0 {
		where = append(where, "package_group_id = "+arg(f.GroupID))
	}
	if f.ArchiveType != "" {
		where = append(where, "archive_type = "+arg(string(f.ArchiveType)))
	}
	if f.Creator != "" {
		where = append(where, "lower(creator) = lower("+arg(f.Creator)+")")
	}
	if len(f.Tags) > 0 {
		where = append(where, "tags @> "+arg(f.Tags)+"::text[]")
	}
	if after != nil {
		where = append(where, fmt.Sprintf("(created_at, id) < (%s, %s)", arg(after.CreatedAt), arg(after.ID)))
	}
	sql := `SELECT ` + packageColumns + ` FROM packages WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY created_at DESC, id DESC LIMIT ` + arg(limit+1)
	items, err := getAll[hoard.Package](ctx, db.q, "list packages", sql, args...)
	if err != nil {
		return nil, nil, err
	}
	var next *PackageCursor
	if len(items) > limit {
		items = items[:limit]
		last := items[limit-1]
		next = &PackageCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	return items, next, nil
}

// ListUngroupedPackages returns packages without a group, newest first
// (SPEC query listUngroupedPackages).
func (db *DB) ListUngroupedPackages(ctx context.Context, after *PackageCursor, limit int) ([]hoard.Package, *PackageCursor, error) {
	return db.ListPackages(ctx, PackageFilter{Ungrouped: true}, after, limit)
}

// CountUngroupedPackages counts packages without a group (SPEC query
// countUngroupedPackages).
func (db *DB) CountUngroupedPackages(ctx context.Context) (int64, error) {
	var n int64
	err := db.q.QueryRow(ctx, `SELECT count(*) FROM packages WHERE package_group_id IS NULL`).Scan(&n)
	return n, wrap("count ungrouped packages", err)
}

// HasPackages reports whether the catalog holds any package.
func (db *DB) HasPackages(ctx context.Context) (bool, error) {
	var yes bool
	err := db.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM packages)`).Scan(&yes)
	return yes, wrap("any package", err)
}

// ListIncompleteMultipartPackages returns multi-part packages whose number of
// stored destination ids differs from their part count, where more than one
// id is stored (SPEC rule 16: a single backfilled id is not flagged).
func (db *DB) ListIncompleteMultipartPackages(ctx context.Context) ([]hoard.Package, error) {
	return getAll[hoard.Package](ctx, db.q, "list incomplete multipart packages",
		`SELECT `+packageColumns+` FROM packages
		 WHERE part_count > 1 AND cardinality(dest_message_ids) > 1 AND cardinality(dest_message_ids) <> part_count
		 ORDER BY id`)
}

// ListOrphanedPackages returns packages with a destination channel but no
// destination message (SPEC rule 16).
func (db *DB) ListOrphanedPackages(ctx context.Context) ([]hoard.Package, error) {
	return getAll[hoard.Package](ctx, db.q, "list orphaned packages",
		`SELECT `+packageColumns+` FROM packages WHERE dest_channel_id IS NOT NULL AND dest_message_id IS NULL ORDER BY id`)
}

// NewPackagesMax is the most new packages NewPackagesSince counts.
const NewPackagesMax = 100

// NewPackagesSince returns the newest package id (0 in an empty catalog)
// and how many packages have an id above since, counted up to
// NewPackagesMax: two probes of the primary key, cheap enough for every
// open catalog page to ask every few seconds.
func (db *DB) NewPackagesSince(ctx context.Context, since int64) (newest int64, count int, err error) {
	err = db.q.QueryRow(ctx, `SELECT coalesce((SELECT max(id) FROM packages), 0),
		(SELECT count(*) FROM (SELECT 1 FROM packages WHERE id > $1 LIMIT $2) n)`, since, NewPackagesMax).Scan(&newest, &count)
	return newest, count, wrap("new packages since", err)
}
