package store

import (
	"context"
	"strings"

	"github.com/hoard/hoard"
)

const channelColumns = `id, platform_id, title, coalesce(username, '') AS username, coalesce(invite_link, '') AS invite_link,
	kind, coalesce(category, '') AS category, is_active, auto_group_enabled, is_forum, is_protected, access_lost_at,
	created_at, updated_at`

// UpsertChannel inserts a channel or, when its platform id is known, updates
// what the platform tells about it (title, username, invite link, forum and
// protected flags), keeping hoard's own settings (kind, category, active,
// auto-grouping): those are taken from c only for a new channel, and
// auto-grouping always starts enabled. c is filled with the stored row.
func (db *DB) UpsertChannel(ctx context.Context, c *hoard.Channel) error {
	if c.Kind == "" {
		c.Kind = hoard.ChannelSource
	}
	active := c.IsActive || c.Kind == hoard.ChannelDestination // destination channels are created active
	got, err := getOne[hoard.Channel](ctx, db.q, "upsert channel", `
		INSERT INTO messenger_channels (platform_id, title, username, invite_link, kind, category, is_active,
			is_forum, is_protected)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (platform_id) DO UPDATE SET title = EXCLUDED.title,
			username = coalesce(EXCLUDED.username, messenger_channels.username),
			invite_link = coalesce(EXCLUDED.invite_link, messenger_channels.invite_link),
			is_forum = EXCLUDED.is_forum, is_protected = EXCLUDED.is_protected, updated_at = now()
		RETURNING `+channelColumns,
		c.PlatformID, c.Title, nullString(c.Username), nullString(c.InviteLink), string(c.Kind),
		nullString(strings.TrimSpace(c.Category)), active, c.IsForum, c.IsProtected)
	if err != nil {
		return err
	}
	*c = *got
	return nil
}

// FindChannelByID returns a channel.
func (db *DB) FindChannelByID(ctx context.Context, id int64) (*hoard.Channel, error) {
	return getOne[hoard.Channel](ctx, db.q, "find channel", `SELECT `+channelColumns+` FROM messenger_channels WHERE id = $1`, id)
}

// FindChannelByPlatformID returns the channel with that platform id.
func (db *DB) FindChannelByPlatformID(ctx context.Context, platformID int64) (*hoard.Channel, error) {
	return getOne[hoard.Channel](ctx, db.q, "find channel by platform id",
		`SELECT `+channelColumns+` FROM messenger_channels WHERE platform_id = $1`, platformID)
}

// FindChannelByRef returns the channel known by a username (any case) or
// an invite link (a ChannelRef's canonical form); ENOTFOUND when hoard
// knows neither.
func (db *DB) FindChannelByRef(ctx context.Context, username, inviteLink string) (*hoard.Channel, error) {
	return getOne[hoard.Channel](ctx, db.q, "find channel by reference",
		`SELECT `+channelColumns+` FROM messenger_channels
		 WHERE ($1 <> '' AND lower(username) = lower($1)) OR ($2 <> '' AND invite_link = $2) ORDER BY id LIMIT 1`,
		username, inviteLink)
}

// FindDestinationChannel returns the active destination channel; ENOTFOUND
// when none is configured.
func (db *DB) FindDestinationChannel(ctx context.Context) (*hoard.Channel, error) {
	return getOne[hoard.Channel](ctx, db.q, "find destination channel",
		`SELECT `+channelColumns+` FROM messenger_channels WHERE kind = 'DESTINATION' AND is_active ORDER BY id LIMIT 1`)
}

// ListChannels returns channels of one kind ("" = all), by title.
func (db *DB) ListChannels(ctx context.Context, kind hoard.ChannelKind) ([]hoard.Channel, error) {
	return getAll[hoard.Channel](ctx, db.q, "list channels",
		`SELECT `+channelColumns+` FROM messenger_channels WHERE $1 = '' OR kind = $1 ORDER BY lower(title), id`, string(kind))
}

// ChannelSettings are the channel fields an administrator edits. Nil fields
// stay as they are.
type ChannelSettings struct {
	Kind             *hoard.ChannelKind
	Category         *string
	IsActive         *bool
	AutoGroupEnabled *bool
}

// UpdateChannelSettings applies s and returns the channel before and after,
// so that a category change can re-tag the channel's packages in the same
// transaction.
func (db *DB) UpdateChannelSettings(ctx context.Context, id int64, s ChannelSettings) (before, after *hoard.Channel, err error) {
	before, err = getOne[hoard.Channel](ctx, db.q, "update channel settings",
		`SELECT `+channelColumns+` FROM messenger_channels WHERE id = $1 FOR UPDATE`, id)
	if err != nil {
		return nil, nil, err
	}
	var kind, category any
	if s.Kind != nil {
		kind = string(*s.Kind)
	}
	if s.Category != nil {
		category = strings.TrimSpace(*s.Category)
	}
	after, err = getOne[hoard.Channel](ctx, db.q, "update channel settings", `
		UPDATE messenger_channels SET kind = coalesce($2, kind),
			category = CASE WHEN $3::text IS NULL THEN category ELSE nullif($3::text, '') END,
			is_active = coalesce($4, is_active), auto_group_enabled = coalesce($5, auto_group_enabled), updated_at = now()
		WHERE id = $1 RETURNING `+channelColumns, id, kind, category, s.IsActive, s.AutoGroupEnabled)
	if err != nil {
		return nil, nil, err
	}
	return before, after, nil
}

// SetChannelAccessLost marks a channel inaccessible (lost=true) or
// accessible again, and reports whether the state changed, so that
// CHANNEL_ACCESS_LOST is raised once per loss.
func (db *DB) SetChannelAccessLost(ctx context.Context, id int64, lost bool) (changed bool, err error) {
	tag, err := db.q.Exec(ctx, `
		UPDATE messenger_channels SET access_lost_at = CASE WHEN $2 THEN now() ELSE NULL END, updated_at = now()
		WHERE id = $1 AND (access_lost_at IS NOT NULL) <> $2`, id, lost)
	if err != nil {
		return false, wrap("set channel access lost", err)
	}
	return tag.RowsAffected() == 1, nil
}

// DeleteChannel removes a channel with its maps, topic progress and skipped
// records. Its packages stay in the catalog with no source channel.
func (db *DB) DeleteChannel(ctx context.Context, id int64) error {
	tag, err := db.q.Exec(ctx, `DELETE FROM messenger_channels WHERE id = $1`, id)
	return notFoundIfNone("delete channel", tag, err)
}

// DestinationChoice is a channel an account has a map to (so it knows the
// channel's access hash): a candidate destination posted to by that account.
type DestinationChoice struct {
	ChannelID    int64
	Title        string
	Username     string
	Kind         hoard.ChannelKind
	IsActive     bool
	AccountID    int64
	AccountPhone string
	AccountName  string
	Role         hoard.MapRole
}

// ListDestinationChoices returns every (channel, signed-in account) pair an
// administrator may choose as the destination and its writer, the current
// destination's writers first, then by title.
func (db *DB) ListDestinationChoices(ctx context.Context) ([]DestinationChoice, error) {
	return getAll[DestinationChoice](ctx, db.q, "list destination choices", `
		SELECT c.id AS channel_id, c.title, coalesce(c.username, '') AS username, c.kind, c.is_active,
			a.id AS account_id, a.phone AS account_phone, a.display_name AS account_name, m.role
		FROM account_channel_maps m
		JOIN messenger_channels c ON c.id = m.channel_id
		JOIN messenger_accounts a ON a.id = m.account_id
		WHERE a.auth_state = 'AUTHENTICATED' AND a.is_active
		ORDER BY (c.kind = 'DESTINATION' AND c.is_active AND m.role = 'WRITER') DESC, lower(c.title), c.id, a.id`)
}

// SetDestination makes channelID the active destination channel, posted to
// by accountID through its map of the channel, which becomes a WRITER map.
// Any other destination is deactivated (its packages keep pointing at it).
// The account must have a map of the channel (EINVALID otherwise: join the
// channel first). Run it in a transaction.
func (db *DB) SetDestination(ctx context.Context, channelID, accountID int64) (*hoard.Channel, error) {
	tag, err := db.q.Exec(ctx, `UPDATE account_channel_maps SET role = 'WRITER' WHERE channel_id = $1 AND account_id = $2`,
		channelID, accountID)
	if err != nil {
		return nil, wrap("set destination: writer map", err)
	}
	if tag.RowsAffected() == 0 {
		return nil, hoard.Errorf(hoard.EINVALID, "set destination: account %d has no access to channel %d", accountID, channelID)
	}
	if _, err := db.q.Exec(ctx, `UPDATE messenger_channels SET is_active = false, updated_at = now()
		WHERE kind = 'DESTINATION' AND is_active AND id <> $1`, channelID); err != nil {
		return nil, wrap("set destination: retire the old one", err)
	}
	return getOne[hoard.Channel](ctx, db.q, "set destination", `UPDATE messenger_channels SET kind = 'DESTINATION',
		is_active = true, updated_at = now() WHERE id = $1 RETURNING `+channelColumns, channelID)
}
