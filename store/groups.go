package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hoard/hoard"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

const groupColumns = `g.id, g.name, g.grouping_source, coalesce(g.grouping_key, '') AS grouping_key,
	coalesce(g.source_channel_id, 0) AS source_channel_id, ` + groupHasPreview + ` AS has_preview,
	(SELECT count(*) FROM packages p WHERE p.package_group_id = g.id) AS member_count, g.created_at, g.updated_at`

const ruleColumns = `id, group_id, coalesce(channel_id, 0) AS channel_id, pattern, signal_type,
	confidence::float8 AS confidence, created_at`

// maxGroupName is the longest group name in characters (the CHECK of
// package_groups.name).
const maxGroupName = 512

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

// GroupFilter narrows ListGroups. Zero fields do not filter.
type GroupFilter struct {
	ChannelID int64
	Source    hoard.GroupingSource
}

// ListGroups returns up to limit groups (default 50, at most 500) with their
// member counts, newest first, with ids below beforeID (0 = from the
// start), and the beforeID of the next page (0 at the end).
func (db *DB) ListGroups(ctx context.Context, f GroupFilter, beforeID int64, limit int) ([]hoard.PackageGroup, int64, error) {
	if limit <= 0 || limit > 500 {
		limit = 50
	}
	items, err := getAll[hoard.PackageGroup](ctx, db.q, "list groups", `
		SELECT `+groupColumns+` FROM package_groups g
		WHERE ($1::bigint = 0 OR g.source_channel_id = $1) AND ($2::text = '' OR g.grouping_source = $2)
			AND ($3::bigint = 0 OR g.id < $3)
		ORDER BY g.id DESC LIMIT $4`, f.ChannelID, string(f.Source), beforeID, limit+1)
	if err != nil {
		return nil, 0, err
	}
	var next int64
	if len(items) > limit {
		items = items[:limit]
		next = items[limit-1].ID
	}
	return items, next, nil
}

// SearchGroupsByName returns up to limit groups (default 20, at most 200)
// whose name contains text, case-insensitively, the most similar names
// first. An empty text finds nothing.
func (db *DB) SearchGroupsByName(ctx context.Context, text string, limit int) ([]hoard.PackageGroup, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return []hoard.PackageGroup{}, nil
	}
	if limit <= 0 || limit > 200 {
		limit = 20
	}
	return getAll[hoard.PackageGroup](ctx, db.q, "search groups", `
		SELECT `+groupColumns+` FROM package_groups g
		WHERE g.name ILIKE $1
		ORDER BY similarity(g.name, $2) DESC, g.id DESC LIMIT $3`, "%"+escapeLike(text)+"%", text, limit)
}

// checkGroupName trims a group name and checks its length.
func checkGroupName(op, name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", hoard.Errorf(hoard.EINVALID, "%s: the group needs a name", op)
	case utf8.RuneCountInString(name) > maxGroupName:
		return "", hoard.Errorf(hoard.EINVALID, "%s: the group name is longer than %d characters", op, maxGroupName)
	}
	return name, nil
}

// RenameGroup sets a group's name (trimmed, 1 to 512 characters) and
// returns the group. The group becomes MANUAL (without a grouping key): a
// user's choice of name is not undone by the grouping engine, which renames
// and regroups only automatic groups.
func (db *DB) RenameGroup(ctx context.Context, id int64, name string) (*hoard.PackageGroup, error) {
	name, err := checkGroupName("rename group", name)
	if err != nil {
		return nil, err
	}
	return getOne[hoard.PackageGroup](ctx, db.q, "rename group", `
		WITH g AS (UPDATE package_groups SET name = $2, updated_at = now(), `+pinGroupSQL+` WHERE id = $1 RETURNING *)
		SELECT `+groupColumns+` FROM g`, id, name)
}

// pinGroupSQL makes a group a user edited MANUAL, so that no automatic pass
// takes its packages away or renames it (grouping.Input.Reevaluate).
const pinGroupSQL = `grouping_source = 'MANUAL', grouping_key = NULL`

// SetGroupPreview stores a group's preview image; nil data removes it.
func (db *DB) SetGroupPreview(ctx context.Context, id int64, data []byte) error {
	tag, err := db.q.Exec(ctx, `UPDATE package_groups SET preview_data = $2, updated_at = now() WHERE id = $1`, id, data)
	return notFoundIfNone("set group preview", tag, err)
}

// groupHasPreview tells whether the group g shows a picture: its own, or
// one of its members' (FindGroupPreview).
const groupHasPreview = `(g.preview_data IS NOT NULL OR EXISTS (SELECT 1 FROM packages m WHERE m.package_group_id = g.id AND m.has_preview))`

// FindGroupPreview returns the picture a group shows: its own preview, or
// else the preview of its oldest member that has one (a group of packages
// without a picture of its own looks like its first one). ENOTFOUND when
// the group does not exist or shows none.
func (db *DB) FindGroupPreview(ctx context.Context, id int64) ([]byte, error) {
	var data []byte
	err := db.q.QueryRow(ctx, `
		SELECT coalesce(g.preview_data, (SELECT m.preview_data FROM packages m
			WHERE m.package_group_id = g.id AND m.has_preview ORDER BY m.created_at, m.id LIMIT 1))
		FROM package_groups g WHERE g.id = $1`, id).Scan(&data)
	if err == nil && data == nil {
		err = pgx.ErrNoRows
	}
	if err != nil {
		return nil, wrap("find group preview", err)
	}
	return data, nil
}

// GroupsShowingPreview returns which of the groups show a picture, their
// own or a member's (FindGroupPreview): for the cards of a result page.
func (db *DB) GroupsShowingPreview(ctx context.Context, ids []int64) (map[int64]bool, error) {
	out := make(map[int64]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := db.q.Query(ctx, `SELECT g.id FROM package_groups g WHERE g.id = ANY($1) AND `+groupHasPreview, ids)
	if err != nil {
		return nil, wrap("groups showing a preview", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, wrap("groups showing a preview", err)
	}
	for _, id := range got {
		out[id] = true
	}
	return out, nil
}

// lockGroups locks the groups' rows in id order (so that two callers never
// deadlock) and returns ENOTFOUND naming the first missing one.
func (db *DB) lockGroups(ctx context.Context, op string, ids ...int64) error {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	rows, err := db.q.Query(ctx, `SELECT id FROM package_groups WHERE id = ANY($1) ORDER BY id FOR UPDATE`, ids)
	if err != nil {
		return wrap(op, err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return wrap(op, err)
	}
	for _, id := range ids {
		if !slices.Contains(found, id) {
			return hoard.Errorf(hoard.ENOTFOUND, "%s: group %d not found", op, id)
		}
	}
	return nil
}

// deleteEmptyGroups deletes those of the groups that have no member left and
// returns how many it deleted.
func (db *DB) deleteEmptyGroups(ctx context.Context, op string, ids []int64) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	tag, err := db.q.Exec(ctx, `DELETE FROM package_groups g WHERE g.id = ANY($1)
		AND NOT EXISTS (SELECT 1 FROM packages p WHERE p.package_group_id = g.id)`, ids)
	if err != nil {
		return 0, wrap(op, err)
	}
	return tag.RowsAffected(), nil
}

// DissolveGroup deletes a group with its rules and returns how many packages
// it released. The released packages become ungrouped and are marked
// keep-ungrouped: the user said they do not belong together, so automatic
// grouping must not put them back (it would re-form the very same group).
func (db *DB) DissolveGroup(ctx context.Context, id int64) (int64, error) {
	var n int64
	err := db.InTx(ctx, func(tx *DB) error {
		if err := tx.lockGroups(ctx, "dissolve group", id); err != nil {
			return err
		}
		tag, err := tx.q.Exec(ctx, `UPDATE packages SET package_group_id = NULL, keep_ungrouped = true, updated_at = now()
			WHERE package_group_id = $1`, id)
		if err != nil {
			return wrap("dissolve group", err)
		}
		n = tag.RowsAffected()
		_, err = tx.q.Exec(ctx, `DELETE FROM package_groups WHERE id = $1`, id)
		return wrap("dissolve group", err)
	})
	return n, err
}

// RemovePackageFromGroup takes a package out of its group and marks it
// keep-ungrouped, so that automatic grouping never places it again; a group
// left empty is deleted (groupDeleted). ENOTFOUND when the package is not a
// member of the group.
func (db *DB) RemovePackageFromGroup(ctx context.Context, groupID, packageID int64) (groupDeleted bool, err error) {
	err = db.InTx(ctx, func(tx *DB) error {
		tag, err := tx.q.Exec(ctx, `UPDATE packages SET package_group_id = NULL, keep_ungrouped = true, updated_at = now()
			WHERE id = $1 AND package_group_id = $2`, packageID, groupID)
		if err != nil {
			return wrap("remove package from group", err)
		}
		if tag.RowsAffected() == 0 {
			return hoard.Errorf(hoard.ENOTFOUND, "remove package from group: package %d is not in group %d", packageID, groupID)
		}
		n, err := tx.deleteEmptyGroups(ctx, "remove package from group", []int64{groupID})
		groupDeleted = n > 0
		return err
	})
	return groupDeleted, err
}

// CreateManualGroup creates a MANUAL group named name from the selected
// packages and returns it. The packages (at least 2) must all come from one
// source channel (packages without a channel count as one); packages that
// were in other groups move, groups left empty are deleted, and the members
// lose their keep-ungrouped mark: the user placed them. Errors: EINVALID for
// fewer than 2 packages, packages of several channels or a bad name,
// ENOTFOUND for an unknown package.
//
// It learns no rule: the rule needs the grouping engine, which the store may
// not import. Enqueue hoard.LearnGroupRuleArgs in the same transaction.
func (db *DB) CreateManualGroup(ctx context.Context, name string, packageIDs []int64) (*hoard.PackageGroup, error) {
	const op = "create manual group"
	name, err := checkGroupName(op, name)
	if err != nil {
		return nil, err
	}
	ids := slices.Clone(packageIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) < 2 {
		return nil, hoard.Errorf(hoard.EINVALID, "%s: select at least 2 packages", op)
	}
	var g *hoard.PackageGroup
	err = db.InTx(ctx, func(tx *DB) error {
		type member struct {
			ID        int64
			ChannelID *int64
			GroupID   *int64
		}
		rows, err := tx.q.Query(ctx, `SELECT id, source_channel_id AS channel_id, package_group_id AS group_id
			FROM packages WHERE id = ANY($1) ORDER BY id FOR UPDATE`, ids)
		if err != nil {
			return wrap(op, err)
		}
		members, err := pgx.CollectRows(rows, pgx.RowToStructByNameLax[member])
		if err != nil {
			return wrap(op, err)
		}
		if len(members) != len(ids) {
			for i, id := range ids {
				if i >= len(members) || members[i].ID != id {
					return hoard.Errorf(hoard.ENOTFOUND, "%s: package %d not found", op, id)
				}
			}
		}
		var oldGroups []int64
		for _, m := range members {
			a, b := members[0].ChannelID, m.ChannelID
			if (a == nil) != (b == nil) || (a != nil && *a != *b) {
				return hoard.Errorf(hoard.EINVALID, "%s: the packages come from different source channels; a group holds packages of one channel", op)
			}
			if m.GroupID != nil {
				oldGroups = append(oldGroups, *m.GroupID)
			}
		}
		var channelID int64
		if members[0].ChannelID != nil {
			channelID = *members[0].ChannelID
		}
		g = &hoard.PackageGroup{Name: name, GroupingSource: hoard.GroupManual, SourceChannelID: channelID}
		if err := tx.CreateGroup(ctx, g); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if _, err := tx.q.Exec(ctx, `UPDATE packages SET package_group_id = $2, keep_ungrouped = false, updated_at = now()
			WHERE id = ANY($1)`, ids, g.ID); err != nil {
			return wrap(op, err)
		}
		if _, err := tx.deleteEmptyGroups(ctx, op, oldGroups); err != nil {
			return err
		}
		g.MemberCount = len(ids)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// MergeGroups moves the packages and learned rules of group sourceID into
// group targetID and deletes the source group (SPEC: Start Merge, then Merge
// Here). The target keeps its name and becomes MANUAL without a grouping
// key, so that no automatic pass undoes the user's merge; it takes the
// source's preview when it has none. A rule the target already has is
// dropped. Errors: EINVALID when both are the same group, ENOTFOUND for an
// unknown group.
func (db *DB) MergeGroups(ctx context.Context, sourceID, targetID int64) (*hoard.PackageGroup, error) {
	return db.mergeGroups(ctx, sourceID, targetID, true)
}

// mergeGroups is MergeGroups; pin: the target becomes MANUAL (a user's
// merge), else it keeps its source and key (the grouping engine's merge).
func (db *DB) mergeGroups(ctx context.Context, sourceID, targetID int64, pin bool) (*hoard.PackageGroup, error) {
	const op = "merge groups"
	if sourceID == targetID {
		return nil, hoard.Errorf(hoard.EINVALID, "%s: a group cannot be merged into itself", op)
	}
	var g *hoard.PackageGroup
	err := db.InTx(ctx, func(tx *DB) error {
		if err := tx.lockGroups(ctx, op, sourceID, targetID); err != nil {
			return err
		}
		steps := []string{
			`UPDATE packages SET package_group_id = $2, updated_at = now() WHERE package_group_id = $1`,
			`UPDATE grouping_rules r SET group_id = $2 WHERE r.group_id = $1 AND NOT EXISTS (
				SELECT 1 FROM grouping_rules x WHERE x.group_id = $2 AND x.signal_type = r.signal_type AND x.pattern = r.pattern)`,
			`UPDATE package_groups t SET preview_data = coalesce(t.preview_data, s.preview_data), updated_at = now()
				FROM package_groups s WHERE s.id = $1 AND t.id = $2`,
		}
		if pin {
			steps = append(steps, `UPDATE package_groups SET `+pinGroupSQL+` WHERE id = $2 AND $1::bigint IS NOT NULL`)
		}
		for _, sql := range steps {
			if _, err := tx.q.Exec(ctx, sql, sourceID, targetID); err != nil {
				return wrap(op, err)
			}
		}
		// The rules the target had already go with the source.
		if _, err := tx.q.Exec(ctx, `DELETE FROM package_groups WHERE id = $1`, sourceID); err != nil {
			return wrap(op, err)
		}
		var err error
		g, err = tx.FindGroupByID(ctx, targetID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// AddGroupingRule stores a learned rule for r.GroupID, in the group's
// channel (r.ChannelID is ignored), and fills r with the stored row. It
// reports false, leaving r as it was, when the group has that rule already.
// ENOTFOUND for an unknown group, EINVALID for a bad signal type, pattern or
// confidence (0 means 1.0).
func (db *DB) AddGroupingRule(ctx context.Context, r *hoard.GroupingRule) (bool, error) {
	const op = "add grouping rule"
	if r.SignalType != hoard.RulePrefix && r.SignalType != hoard.RuleCreator {
		return false, hoard.Errorf(hoard.EINVALID, "%s: unknown signal type %q", op, r.SignalType)
	}
	pattern := strings.TrimSpace(r.Pattern)
	if pattern == "" || utf8.RuneCountInString(pattern) > 512 {
		return false, hoard.Errorf(hoard.EINVALID, "%s: the pattern must have 1 to 512 characters", op)
	}
	conf := r.Confidence
	if conf == 0 {
		conf = 1
	}
	if conf < 0 || conf > 1 {
		return false, hoard.Errorf(hoard.EINVALID, "%s: confidence %v is outside (0, 1]", op, conf)
	}
	var got *hoard.GroupingRule
	err := db.InTx(ctx, func(tx *DB) error {
		var channelID *int64
		if err := tx.q.QueryRow(ctx, `SELECT source_channel_id FROM package_groups WHERE id = $1`, r.GroupID).Scan(&channelID); err != nil {
			if isNoRows(err) {
				return hoard.Errorf(hoard.ENOTFOUND, "%s: group %d not found", op, r.GroupID)
			}
			return wrap(op, err)
		}
		rows, err := tx.q.Query(ctx, `INSERT INTO grouping_rules (group_id, channel_id, pattern, signal_type, confidence)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT (group_id, signal_type, pattern) DO NOTHING
			RETURNING `+ruleColumns, r.GroupID, channelID, pattern, string(r.SignalType), conf)
		if err != nil {
			return wrap(op, err)
		}
		got, err = collectOptional[hoard.GroupingRule](rows)
		return wrap(op, err)
	})
	if err != nil || got == nil {
		return false, err
	}
	*r = *got
	return true, nil
}

// ListGroupingRules returns the learned rules of a channel, the strongest
// first (confidence, then id).
func (db *DB) ListGroupingRules(ctx context.Context, channelID int64) ([]hoard.GroupingRule, error) {
	return getAll[hoard.GroupingRule](ctx, db.q, "list grouping rules",
		`SELECT `+ruleColumns+` FROM grouping_rules WHERE channel_id = $1 ORDER BY confidence DESC, id`, channelID)
}

// ListGroupRules returns the learned rules a group taught, the strongest
// first.
func (db *DB) ListGroupRules(ctx context.Context, groupID int64) ([]hoard.GroupingRule, error) {
	return getAll[hoard.GroupingRule](ctx, db.q, "list group rules",
		`SELECT `+ruleColumns+` FROM grouping_rules WHERE group_id = $1 ORDER BY confidence DESC, id`, groupID)
}

// LockChannelGrouping takes the transaction-scoped lock that serialises
// grouping runs of one channel, so that a run loads what the previous one
// committed. It needs a DB bound to a transaction (InTx); the lock is
// released at commit or rollback.
func (db *DB) LockChannelGrouping(ctx context.Context, channelID int64) error {
	if db.tx == nil {
		return fmt.Errorf("lock channel grouping: needs a transaction")
	}
	_, err := db.q.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('hoard.group_channel', $1))`, channelID)
	return wrap("lock channel grouping", err)
}

// placeableSQL is true for a package a grouping pass may place: an
// ungrouped one not kept out, and when $3 (re-evaluation) one of an
// automatic group.
const placeableSQL = `(p.package_group_id IS NULL AND NOT p.keep_ungrouped OR $3::boolean AND EXISTS (
	SELECT 1 FROM package_groups c WHERE c.id = p.package_group_id AND c.grouping_source <> 'MANUAL'))`

// packageGroupingColumns are the hoard.GroupingPackage fields in scan order
// (see scanGroupingPackages). Album and caption only matter for packages a
// pass may place (placeableSQL); file name and creator of grouped packages
// only for the conflict check against rules ($2: load them).
const packageGroupingColumns = `p.id,
	CASE WHEN $2 OR p.package_group_id IS NULL THEN p.file_name ELSE '' END,
	CASE WHEN $2 OR p.package_group_id IS NULL THEN coalesce(p.creator, '') ELSE '' END,
	p.source_posted_at, coalesce(p.source_message_id, 0), coalesce(p.reply_to_message_id, 0),
	coalesce(p.package_group_id, 0), p.keep_ungrouped,
	CASE WHEN ` + placeableSQL + ` THEN coalesce(p.media_album_id, 0) ELSE 0 END,
	CASE WHEN ` + placeableSQL + ` THEN coalesce(p.source_caption, '') ELSE '' END`

// scanGroupingPackages scans rows of packageGroupingColumns. It scans by
// position into values that need no allocation: a channel has tens of
// thousands of packages.
func scanGroupingPackages(rows pgx.Rows) ([]hoard.GroupingPackage, error) {
	defer rows.Close()
	var out []hoard.GroupingPackage
	var posted pgtype.Timestamptz
	for rows.Next() {
		var p hoard.GroupingPackage
		if err := rows.Scan(&p.ID, &p.FileName, &p.Creator, &posted, &p.SourceMessageID, &p.ReplyToMessageID,
			&p.GroupID, &p.KeepUngrouped, &p.AlbumID, &p.Caption); err != nil {
			return nil, err
		}
		if posted.Valid {
			p.PostedAt = posted.Time
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// SnapshotOptions say what LoadGroupingSnapshot loads.
type SnapshotOptions struct {
	// AutoGroup loads what the automatic passes read beyond the placeable
	// packages: their archive paths, the packages their reply chains run
	// through, and grouped packages posted within TimeWindow of one of them.
	AutoGroup  bool
	TimeWindow time.Duration
	// All loads every package of the channel with every field the engine
	// reads. It is implied when the channel has learned rules: the conflict
	// check reads every grouped package's name and creator.
	All bool
	// Reevaluate loads, for grouping.Input.Reevaluate, every package of the
	// channel, and the packages of automatic groups with the fields of
	// ungrouped ones. It implies All.
	Reevaluate bool
}

// LoadGroupingSnapshot loads what the grouping engine needs about a channel:
// its packages (by id), its groups plus the groups its rules belong to, and
// its rules. Without opts.All and rules it loads only the packages the
// passes read (see SnapshotOptions), so that grouping a channel of many
// grouped packages after one new arrival costs little; the engine's plan is
// the same as over all packages. Fields no pass reads are left empty (see
// hoard.GroupingPackage).
func (db *DB) LoadGroupingSnapshot(ctx context.Context, channelID int64, opts SnapshotOptions) (*hoard.GroupingSnapshot, error) {
	const op = "load grouping snapshot"
	rules, err := db.ListGroupingRules(ctx, channelID)
	if err != nil {
		return nil, err
	}
	all := opts.All || opts.Reevaluate || len(rules) > 0
	window := opts.TimeWindow
	if !opts.AutoGroup || window < 0 {
		window = 0
	}
	var rows pgx.Rows
	if all {
		rows, err = db.q.Query(ctx, `SELECT `+packageGroupingColumns+` FROM packages p WHERE p.source_channel_id = $1 ORDER BY p.id`,
			channelID, true, opts.Reevaluate)
	} else {
		// free: the placeable packages. near: grouped packages within the
		// window of a free one (the time-window pass grows groups through
		// them). chain: the messages the free packages' reply chains run
		// through, following the lowest-id package of each message as the
		// engine does; UNION stops on cycles.
		var ids []int64
		err = db.q.QueryRow(ctx, `
			WITH RECURSIVE free AS (
				SELECT id, source_posted_at, reply_to_message_id FROM packages
				WHERE source_channel_id = $1 AND package_group_id IS NULL AND NOT keep_ungrouped),
			near AS (
				SELECT n.id FROM (SELECT DISTINCT source_posted_at AS t FROM free
					WHERE $2::interval > '0'::interval AND source_posted_at IS NOT NULL) f
				CROSS JOIN LATERAL (SELECT q.id FROM packages q WHERE q.source_channel_id = $1 AND q.package_group_id IS NOT NULL
					AND q.source_posted_at BETWEEN f.t - $2::interval AND f.t + $2::interval) n),
			chain(msg) AS (
				SELECT reply_to_message_id FROM free WHERE $3 AND reply_to_message_id IS NOT NULL
				UNION
				SELECT r.reply_to_message_id FROM chain c
				CROSS JOIN LATERAL (SELECT q.reply_to_message_id FROM packages q
					WHERE q.source_channel_id = $1 AND q.source_message_id = c.msg ORDER BY q.id LIMIT 1) r
				WHERE r.reply_to_message_id IS NOT NULL),
			ids AS (
				SELECT id FROM free UNION SELECT id FROM near
				UNION SELECT q.id FROM chain c JOIN packages q ON q.source_channel_id = $1 AND q.source_message_id = c.msg)
			SELECT array_agg(id) FROM ids`, channelID, window, opts.AutoGroup).Scan(&ids)
		if err != nil {
			return nil, wrap(op, err)
		}
		// A second statement: the planner cannot estimate the union above
		// and would scan the whole channel to join it.
		rows, err = db.q.Query(ctx, `SELECT `+packageGroupingColumns+` FROM packages p WHERE p.id = ANY($1) ORDER BY p.id`,
			nonNilInts(ids), false, false)
	}
	if err != nil {
		return nil, wrap(op, err)
	}
	pkgs, err := scanGroupingPackages(rows)
	if err != nil {
		return nil, wrap(op, err)
	}
	if opts.AutoGroup {
		if err := db.loadGroupingPaths(ctx, channelID, pkgs, opts.Reevaluate); err != nil {
			return nil, err
		}
	}
	rows, err = db.q.Query(ctx, `SELECT g.id, g.name, g.grouping_source, coalesce(g.grouping_key, ''),
			coalesce(g.source_channel_id, 0) FROM package_groups g
		WHERE g.source_channel_id = $1 OR g.id IN (SELECT group_id FROM grouping_rules WHERE channel_id = $1)
		ORDER BY g.id`, channelID)
	if err != nil {
		return nil, wrap(op, err)
	}
	var groups []hoard.PackageGroup
	var g hoard.PackageGroup
	_, err = pgx.ForEachRow(rows, []any{&g.ID, &g.Name, &g.GroupingSource, &g.GroupingKey, &g.SourceChannelID}, func() error {
		groups = append(groups, g)
		return nil
	})
	if err != nil {
		return nil, wrap(op, err)
	}
	return &hoard.GroupingSnapshot{Packages: pkgs, Groups: groups, Rules: rules}, nil
}

// loadGroupingPaths fills the paths of the placeable archives among pkgs
// (sorted by id); reeval: packages of automatic groups are placeable.
func (db *DB) loadGroupingPaths(ctx context.Context, channelID int64, pkgs []hoard.GroupingPackage, reeval bool) error {
	const op = "load grouping paths"
	rows, err := db.q.Query(ctx, `
		SELECT f.package_id, f.path FROM packages p
		CROSS JOIN LATERAL (SELECT package_id, path FROM package_files WHERE package_id = p.id ORDER BY ordinal LIMIT $2) f
		WHERE p.source_channel_id = $1 AND `+placeableSQL+`
			AND p.archive_type NOT IN ('DOCUMENT', '7Z')
		ORDER BY f.package_id`, channelID, hoard.GroupingPathLimit, reeval)
	if err != nil {
		return wrap(op, err)
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		var id int64
		var path string
		if err := rows.Scan(&id, &path); err != nil {
			return wrap(op, err)
		}
		for i < len(pkgs) && pkgs[i].ID < id {
			i++
		}
		if i < len(pkgs) && pkgs[i].ID == id {
			pkgs[i].Paths = append(pkgs[i].Paths, path)
		}
	}
	return wrap(op, rows.Err())
}

// LoadGroupMembers returns a group's members as the grouping engine sees
// them (without paths), by id.
func (db *DB) LoadGroupMembers(ctx context.Context, groupID int64) ([]hoard.GroupingPackage, error) {
	rows, err := db.q.Query(ctx, `SELECT `+packageGroupingColumns+` FROM packages p WHERE p.package_group_id = $1 ORDER BY p.id`, groupID, true, false)
	if err != nil {
		return nil, wrap("load group members", err)
	}
	pkgs, err := scanGroupingPackages(rows)
	return pkgs, wrap("load group members", err)
}

// GroupingResult is what ApplyGroupingPlan changed.
type GroupingResult struct {
	GroupsCreated int   `json:"groups_created"`
	GroupsMerged  int   `json:"groups_merged,omitempty"`
	PackagesMoved int64 `json:"packages_moved"` // into new or existing groups
	// Re-evaluation (grouping.Input.Reevaluate) only.
	PackagesUngrouped int64 `json:"packages_ungrouped,omitempty"`
	GroupsDissolved   int   `json:"groups_dissolved,omitempty"`
	GroupsRenamed     int   `json:"groups_renamed,omitempty"`
	Conflicts         int   `json:"conflicts"` // GROUPING_CONFLICT notifications raised
}

// ApplyGroupingPlan applies a grouping plan of one channel in one
// transaction. A new group whose channel, source and key exist already is
// joined instead of created. Only packages of the channel that are
// ungrouped and not keep-ungrouped, or with plan.Regroup in an automatic
// group, move, so a
// package a user grouped in the meantime is never taken away; a new group
// that gets no member that way is not kept. Ungroup, Dissolve and Renames
// touch automatic groups only (applyRegrouping). Each conflict raises one GROUPING_CONFLICT
// notification (dedup key = its Key) unless that pair of groups was ever
// reported before, even if the user dismissed the notification long ago.
func (db *DB) ApplyGroupingPlan(ctx context.Context, channelID int64, plan hoard.GroupingPlan) (GroupingResult, error) {
	var res GroupingResult
	if channelID <= 0 {
		return res, hoard.Errorf(hoard.EINVALID, "apply grouping plan: no channel")
	}
	err := db.InTx(ctx, func(tx *DB) error {
		var err error
		if res, err = tx.applyGroupingPlan(ctx, channelID, plan); err != nil {
			return fmt.Errorf("apply grouping plan: %w", err)
		}
		return nil
	})
	return res, err
}

func (db *DB) applyGroupingPlan(ctx context.Context, channelID int64, plan hoard.GroupingPlan) (GroupingResult, error) {
	var res GroupingResult
	var movePkg, moveGroup []int64
	move := func(gid int64, ids []int64) {
		for _, id := range ids {
			movePkg = append(movePkg, id)
			moveGroup = append(moveGroup, gid)
		}
	}

	// New groups: one insert for all keyed ones. Specs with the same source
	// and key are one group (an upsert may not touch a row twice).
	type specKey struct {
		src hoard.GroupingSource
		key string
	}
	var names, sources, keys []string
	members := map[specKey][]int64{}
	var created []int64
	for _, s := range plan.NewGroups {
		if !s.Source.Valid() {
			return res, hoard.Errorf(hoard.EINVALID, "unknown grouping source %q", s.Source)
		}
		if len(s.PackageIDs) == 0 {
			continue
		}
		name := groupNameOrDefault(s.Name)
		if s.Key == "" {
			g := &hoard.PackageGroup{Name: name, GroupingSource: s.Source, SourceChannelID: channelID}
			if err := db.CreateGroup(ctx, g); err != nil {
				return res, err
			}
			created = append(created, g.ID)
			move(g.ID, s.PackageIDs)
			continue
		}
		k := specKey{s.Source, indexableKey(s.Key)}
		if _, ok := members[k]; !ok {
			names, sources, keys = append(names, name), append(sources, string(s.Source)), append(keys, k.key)
		}
		members[k] = append(members[k], s.PackageIDs...)
	}
	if len(keys) > 0 {
		rows, err := db.q.Query(ctx, `
			INSERT INTO package_groups (name, grouping_source, grouping_key, source_channel_id)
			SELECT n, s, k, $4 FROM unnest($1::text[], $2::text[], $3::text[]) AS u(n, s, k)
			ON CONFLICT (source_channel_id, grouping_source, grouping_key) WHERE grouping_key IS NOT NULL
			DO UPDATE SET updated_at = package_groups.updated_at
			RETURNING id, grouping_source, grouping_key, xmax = 0`, names, sources, keys, channelID)
		if err != nil {
			return res, wrap("create groups", err)
		}
		for rows.Next() {
			var id int64
			var src, key string
			var inserted bool
			if err := rows.Scan(&id, &src, &key, &inserted); err != nil {
				rows.Close()
				return res, wrap("create groups", err)
			}
			if inserted {
				created = append(created, id)
			}
			move(id, members[specKey{hoard.GroupingSource(src), key}])
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return res, wrap("create groups", err)
		}
	}
	for _, j := range plan.Joins {
		move(j.GroupID, j.PackageIDs)
	}

	if len(movePkg) > 0 {
		tag, err := db.q.Exec(ctx, `
			UPDATE packages p SET package_group_id = m.gid, updated_at = now()
			FROM unnest($1::bigint[], $2::bigint[]) AS m(pid, gid)
			WHERE p.id = m.pid AND p.source_channel_id = $3 AND p.package_group_id IS DISTINCT FROM m.gid
				AND (p.package_group_id IS NULL AND NOT p.keep_ungrouped OR $4 AND EXISTS (SELECT 1 FROM package_groups c
					WHERE c.id = p.package_group_id AND c.grouping_source <> 'MANUAL'))
				AND EXISTS (SELECT 1 FROM package_groups g WHERE g.id = m.gid)`, movePkg, moveGroup, channelID, plan.Regroup)
		if err != nil {
			return res, wrap("move packages", err)
		}
		res.PackagesMoved = tag.RowsAffected()
	}
	dropped, err := db.deleteEmptyGroups(ctx, "drop empty new groups", created)
	if err != nil {
		return res, err
	}
	res.GroupsCreated = len(created) - int(dropped)
	if err := db.applyRegrouping(ctx, channelID, plan, &res); err != nil {
		return res, err
	}

	// Merges: only AUTO_TIME groups of this channel fold together (the
	// engine merges nothing else; a group a user made stays as it is).
	for _, m := range plan.Merges {
		var ok bool
		err := db.q.QueryRow(ctx, `SELECT count(*) = 2 FROM package_groups
			WHERE id IN ($1, $2) AND source_channel_id = $3 AND grouping_source = 'AUTO_TIME'`, m.From, m.Into, channelID).Scan(&ok)
		if err != nil {
			return res, wrap("merge time groups", err)
		}
		if !ok || m.From == m.Into {
			continue
		}
		if _, err := db.mergeGroups(ctx, m.From, m.Into, false); err != nil {
			return res, err
		}
		res.GroupsMerged++
	}

	res.Conflicts, err = db.raiseGroupingConflicts(ctx, channelID, plan.Conflicts)
	return res, err
}

// applyRegrouping applies what a plan of a re-evaluation adds (see
// grouping.Input.Reevaluate): it takes packages out of automatic groups,
// deletes the automatic groups left empty and renames and re-keys automatic
// groups. A MANUAL group is never touched: a user may have made one of an
// automatic group since the plan was made. A re-key that would clash with
// another group of the same source keeps the old key.
func (db *DB) applyRegrouping(ctx context.Context, channelID int64, plan hoard.GroupingPlan, res *GroupingResult) error {
	if len(plan.Ungroup) > 0 {
		tag, err := db.q.Exec(ctx, `UPDATE packages p SET package_group_id = NULL, updated_at = now()
			WHERE p.id = ANY($1) AND p.source_channel_id = $2 AND EXISTS (SELECT 1 FROM package_groups c
				WHERE c.id = p.package_group_id AND c.grouping_source <> 'MANUAL')`, plan.Ungroup, channelID)
		if err != nil {
			return wrap("ungroup packages", err)
		}
		res.PackagesUngrouped = tag.RowsAffected()
	}
	if len(plan.Dissolve) > 0 {
		tag, err := db.q.Exec(ctx, `DELETE FROM package_groups g WHERE g.id = ANY($1) AND g.source_channel_id = $2
			AND g.grouping_source <> 'MANUAL' AND NOT EXISTS (SELECT 1 FROM packages p WHERE p.package_group_id = g.id)`,
			plan.Dissolve, channelID)
		if err != nil {
			return wrap("dissolve groups", err)
		}
		res.GroupsDissolved = int(tag.RowsAffected())
	}
	for _, r := range plan.Renames {
		var key *string
		if r.Key != "" {
			k := indexableKey(r.Key)
			key = &k
		}
		tag, err := db.q.Exec(ctx, `UPDATE package_groups g SET name = $2, updated_at = now(),
				grouping_key = CASE WHEN $3::text IS NULL OR NOT EXISTS (SELECT 1 FROM package_groups o
					WHERE o.source_channel_id = g.source_channel_id AND o.grouping_source = g.grouping_source
						AND o.grouping_key = $3 AND o.id <> g.id) THEN $3 ELSE g.grouping_key END
			WHERE g.id = $1 AND g.source_channel_id = $4 AND g.grouping_source <> 'MANUAL'
				AND (g.name <> $2 OR g.grouping_key IS DISTINCT FROM $3)`,
			r.GroupID, groupNameOrDefault(r.Name), key, channelID)
		if err != nil {
			return wrap("rename groups", err)
		}
		res.GroupsRenamed += int(tag.RowsAffected())
	}
	return nil
}

// groupNameOrDefault trims a generated group name to the column's limit.
// maxKeyBytes bounds a stored grouping key: package_groups_key_idx is a
// b-tree, whose entries hold about 2,700 bytes.
const maxKeyBytes = 512

// indexableKey is the form of a grouping key that the unique index holds:
// the key itself, or for a longer one (a root folder of thousands of
// characters from a stranger's archive) its first characters and the
// SHA-256 of the whole, so distinct keys stay distinct. The same key always
// maps to the same form, so later runs find the group again.
func indexableKey(key string) string {
	if len(key) <= maxKeyBytes {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return cutBytes(key, maxKeyBytes-65) + "#" + hex.EncodeToString(sum[:])
}

// cutBytes cuts s to at most n bytes without splitting a UTF-8 sequence.
func cutBytes(s string, n int) string {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:min(n, len(s))]
}

func groupNameOrDefault(name string) string {
	name = strings.TrimSpace(name)
	if name == "" {
		return "Unnamed group"
	}
	if utf8.RuneCountInString(name) > maxGroupName {
		name = strings.TrimSpace(string([]rune(name)[:maxGroupName]))
	}
	return name
}

// raiseGroupingConflicts records the conflict pairs never reported before
// and raises one notification for each; it returns how many it raised.
func (db *DB) raiseGroupingConflicts(ctx context.Context, channelID int64, conflicts []hoard.GroupConflict) (int, error) {
	if len(conflicts) == 0 {
		return 0, nil
	}
	byPair := map[[2]int64]hoard.GroupConflict{}
	var as, bs []int64
	for _, c := range conflicts {
		a, b := min(c.GroupA, c.GroupB), max(c.GroupA, c.GroupB)
		p := [2]int64{a, b}
		if _, ok := byPair[p]; ok || a == b {
			continue
		}
		byPair[p] = c
		as, bs = append(as, a), append(bs, b)
	}
	type fresh struct {
		A, B         int64
		NameA, NameB string
	}
	rows, err := db.q.Query(ctx, `
		WITH ins AS (
			INSERT INTO grouping_conflicts (group_a, group_b)
			SELECT u.a, u.b FROM unnest($1::bigint[], $2::bigint[]) AS u(a, b)
			WHERE EXISTS (SELECT 1 FROM package_groups WHERE id = u.a) AND EXISTS (SELECT 1 FROM package_groups WHERE id = u.b)
			ON CONFLICT DO NOTHING
			RETURNING group_a, group_b)
		SELECT ins.group_a AS a, ins.group_b AS b, ga.name AS name_a, gb.name AS name_b
		FROM ins JOIN package_groups ga ON ga.id = ins.group_a JOIN package_groups gb ON gb.id = ins.group_b
		ORDER BY 1, 2`, as, bs)
	if err != nil {
		return 0, wrap("record grouping conflicts", err)
	}
	news, err := pgx.CollectRows(rows, pgx.RowToStructByNameLax[fresh])
	if err != nil {
		return 0, wrap("record grouping conflicts", err)
	}
	n := 0
	for _, f := range news {
		c := byPair[[2]int64{f.A, f.B}]
		key := c.Key
		if key == "" {
			key = fmt.Sprintf("%s:%d:%d", hoard.NotifyGroupingConflict, f.A, f.B)
		}
		detail, err := json.Marshal(map[string]any{"group_a": f.A, "group_b": f.B, "name_a": f.NameA, "name_b": f.NameB,
			"package_ids": nonNilInts(c.PackageIDs), "patterns": nonNilStrings(c.Patterns)})
		if err != nil {
			return n, fmt.Errorf("record grouping conflicts: %w", err)
		}
		note := &hoard.Notification{
			Type:     hoard.NotifyGroupingConflict,
			Severity: hoard.SeverityInfo,
			Title:    fmt.Sprintf("Grouping conflict: “%s” and “%s”", f.NameA, f.NameB),
			Message: fmt.Sprintf("%d package(s) match learned rules of both groups (%s). Merge the groups, or move the packages by hand.",
				len(c.PackageIDs), strings.Join(c.Patterns, ", ")),
			Context:   detail,
			DedupKey:  key,
			ChannelID: channelID,
		}
		ok, err := db.CreateNotification(ctx, note)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}
