package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hoard/hoard"
)

// The queries of the read-only WebDAV view of the catalog (package dav).
// A folder lists only packages that can be downloaded — published to the
// destination channel — and creators, tags and groups that hold one. Every
// listing is bounded (DavFolderLimit entries, read DavPageSize at a time)
// so that no request loads a whole table, and folder names resolve back to
// rows through indexed lookups.

// DavFolderLimit is the most entries a WebDAV folder lists.
const DavFolderLimit = 10_000

// DavPageSize is how many rows one query of a WebDAV listing reads.
const DavPageSize = 1_000

// DavLatest is how many packages the WebDAV latest/ folder lists.
const DavLatest = 100

// davPublished is the condition on packages p that a WebDAV folder lists:
// published, so that download.Service.Open can serve them.
const davPublished = `p.dest_channel_id IS NOT NULL AND cardinality(p.dest_message_ids) > 0`

// DavGroup is a package group as the WebDAV view lists it.
type DavGroup struct {
	ID   int64
	Name string
}

// DavPackageFolder selects the packages of one WebDAV folder: exactly one
// of Creator (case-insensitive, as PackageFilter.Creator), GroupID, Tag
// (exact) or Latest.
type DavPackageFolder struct {
	Creator string
	GroupID int64
	Tag     string
	Latest  bool
}

// pageAll reads up to limit rows page by page: page returns up to n rows
// after the last row read (nil at the start).
func pageAll[T any](limit int, page func(last *T, n int) ([]T, error)) ([]T, error) {
	var out []T
	var last *T
	for len(out) < limit {
		n := min(DavPageSize, limit-len(out))
		rows, err := page(last, n)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
		if len(rows) < n {
			break
		}
		last = &out[len(out)-1]
	}
	return out, nil
}

// ListDavCreators returns the creators that hold a published package, one
// per case-insensitive name (spelled as its smallest spelling in byte
// order), ordered by their lower-case name in byte order, at most
// DavFolderLimit.
func (db *DB) ListDavCreators(ctx context.Context) ([]string, error) {
	type row struct{ Key, Name string }
	rows, err := pageAll(DavFolderLimit, func(last *row, n int) ([]row, error) {
		after := ""
		if last != nil {
			after = last.Key
		}
		return getAll[row](ctx, db.q, "list dav creators", `
			SELECT lower(c.creator) COLLATE "C" AS key, min(c.creator COLLATE "C") AS name
			FROM catalog_creators c
			WHERE lower(c.creator) COLLATE "C" > $1
				AND EXISTS (SELECT 1 FROM packages p WHERE lower(p.creator) = lower(c.creator) AND `+davPublished+`)
			GROUP BY 1 ORDER BY 1 LIMIT $2`, after, n)
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.Name
	}
	return names, nil
}

// FindDavCreator returns the spelling ListDavCreators gives the creator
// named creator case-insensitively, and false when no published package
// has that creator.
func (db *DB) FindDavCreator(ctx context.Context, creator string) (string, bool, error) {
	var name *string
	err := db.q.QueryRow(ctx, `
		SELECT min(c.creator COLLATE "C") FROM catalog_creators c
		WHERE lower(c.creator) = lower($1)
			AND EXISTS (SELECT 1 FROM packages p WHERE lower(p.creator) = lower(c.creator) AND `+davPublished+`)`,
		creator).Scan(&name)
	if err != nil {
		return "", false, fmt.Errorf("find dav creator: %w", err)
	}
	if name == nil {
		return "", false, nil
	}
	return *name, true, nil
}

// ListDavTags returns the tags that a published package carries, in byte
// order, at most DavFolderLimit.
func (db *DB) ListDavTags(ctx context.Context) ([]string, error) {
	return pageAll(DavFolderLimit, func(last *string, n int) ([]string, error) {
		after := ""
		if last != nil {
			after = *last
		}
		rows, err := db.q.Query(ctx, `
			SELECT t.tag FROM catalog_tags t
			WHERE t.tag COLLATE "C" > $1
				AND EXISTS (SELECT 1 FROM packages p WHERE p.tags @> ARRAY[t.tag] AND `+davPublished+`)
			ORDER BY t.tag COLLATE "C" LIMIT $2`, after, n)
		if err != nil {
			return nil, fmt.Errorf("list dav tags: %w", err)
		}
		tags, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("list dav tags: %w", err)
		}
		return tags, nil
	})
}

// HasDavTag reports whether a published package carries tag (exactly).
func (db *DB) HasDavTag(ctx context.Context, tag string) (bool, error) {
	var ok bool
	err := db.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM packages p WHERE p.tags @> ARRAY[$1::text] AND `+davPublished+`)`,
		tag).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("find dav tag: %w", err)
	}
	return ok, nil
}

// ListDavGroups returns the groups that hold a published package, oldest
// (lowest id) first, at most DavFolderLimit.
func (db *DB) ListDavGroups(ctx context.Context) ([]DavGroup, error) {
	return pageAll(DavFolderLimit, func(last *DavGroup, n int) ([]DavGroup, error) {
		var after int64
		if last != nil {
			after = last.ID
		}
		return getAll[DavGroup](ctx, db.q, "list dav groups", `
			SELECT g.id, g.name FROM package_groups g
			WHERE g.id > $1 AND EXISTS (SELECT 1 FROM packages p WHERE p.package_group_id = g.id AND `+davPublished+`)
			ORDER BY g.id LIMIT $2`, after, n)
	})
}

// FindDavGroupByName returns the oldest group named exactly name that
// holds a published package; false when there is none.
func (db *DB) FindDavGroupByName(ctx context.Context, name string) (DavGroup, bool, error) {
	got, err := getAll[DavGroup](ctx, db.q, "find dav group", `
		SELECT g.id, g.name FROM package_groups g
		WHERE g.name = $1 AND EXISTS (SELECT 1 FROM packages p WHERE p.package_group_id = g.id AND `+davPublished+`)
		ORDER BY g.id LIMIT 1`, name)
	if err != nil || len(got) == 0 {
		return DavGroup{}, false, err
	}
	return got[0], true, nil
}

// ListDavPackages returns the published packages of a WebDAV folder, newest
// first: at most DavFolderLimit, or DavLatest for the latest folder. A
// folder that selects nothing is EINVALID.
func (db *DB) ListDavPackages(ctx context.Context, f DavPackageFolder) ([]hoard.Package, error) {
	var cond string
	var arg any
	limit := DavFolderLimit
	switch {
	case f.Creator != "":
		cond, arg = "lower(p.creator) = lower($1::text)", f.Creator
	case f.GroupID != 0:
		cond, arg = "p.package_group_id = $1::bigint", f.GroupID
	case f.Tag != "":
		cond, arg = "p.tags @> ARRAY[$1::text]", f.Tag
	case f.Latest:
		cond, arg, limit = "$1::bool", true, DavLatest
	default:
		return nil, hoard.Errorf(hoard.EINVALID, "list dav packages: no folder selected")
	}
	return pageAll(limit, func(last *hoard.Package, n int) ([]hoard.Package, error) {
		sql := `SELECT ` + packageColumns + ` FROM packages p WHERE ` + cond + ` AND ` + davPublished
		args := []any{arg, n}
		if last != nil {
			sql += ` AND (p.created_at, p.id) < ($3, $4)`
			args = append(args, last.CreatedAt, last.ID)
		}
		return getAll[hoard.Package](ctx, db.q, "list dav packages", sql+` ORDER BY p.created_at DESC, p.id DESC LIMIT $2`, args...)
	})
}
