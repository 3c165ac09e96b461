package store

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hoard/hoard"
)

// Limits of subscriptions.
const (
	// MaxSubscriptionPattern is the longest pattern in characters (the
	// CHECK of bot_subscriptions.pattern allows 256).
	MaxSubscriptionPattern = 100
	// MaxSubscriptionsPerUser bounds what one user makes the notifier match.
	MaxSubscriptionsPerUser = 50
)

const subscriptionColumns = `id, user_id, pattern, paused_at, created_at`

// subscriptionMatch is how a subscription's pattern matches a package,
// close to how SearchPackages matches its text. Words (SearchWords) match
// the search vector, every word as a prefix, with the 'simple'
// configuration when they hold fewer than 3 characters (word prefixes,
// where the catalog's short search matches inside the words of names) and
// 'english' otherwise (SearchFullText); the trimmed pattern also matches as
// a substring of the file name (SearchSubstring, the search's fallback). A
// package matches when either does; paths inside archives are not matched.
func subscriptionMatch(pattern string) (config, query, like string) {
	words := SearchWords(pattern)
	config = "english"
	if utf8.RuneCountInString(strings.Join(words, "")) < 3 {
		config = "simple"
	}
	if len(words) > 0 {
		query = tsQuery(words)
	}
	return config, query, "%" + escapeLike(strings.TrimSpace(pattern)) + "%"
}

// CreateSubscription subscribes a user to new packages matching pattern
// (trimmed; 1 to MaxSubscriptionPattern characters with a letter or digit).
// The same pattern twice (case-insensitively) is ECONFLICT; more than
// MaxSubscriptionsPerUser is EINVALID.
func (db *DB) CreateSubscription(ctx context.Context, userID int64, pattern string) (*hoard.BotSubscription, error) {
	pattern = strings.TrimSpace(pattern)
	switch {
	case len(SearchWords(pattern)) == 0:
		return nil, hoard.Errorf(hoard.EINVALID, "A subscription needs a word to look for (letters or digits).")
	case utf8.RuneCountInString(pattern) > MaxSubscriptionPattern:
		return nil, hoard.Errorf(hoard.EINVALID, "A subscription is at most %d characters long.", MaxSubscriptionPattern)
	}
	config, query, like := subscriptionMatch(pattern)
	var sub *hoard.BotSubscription
	err := db.InTx(ctx, func(tx *DB) error {
		var n int
		// The user's row lock serialises concurrent subscribes of one user.
		if err := tx.q.QueryRow(ctx, `SELECT (SELECT count(*) FROM bot_subscriptions WHERE user_id = u.id) FROM users u
			WHERE u.id = $1 FOR UPDATE`, userID).Scan(&n); err != nil {
			return wrap("subscribe", err)
		}
		if n >= MaxSubscriptionsPerUser {
			return hoard.Errorf(hoard.EINVALID, "You have %d subscriptions, the most there may be: remove one first.", n)
		}
		var err error
		sub, err = getOne[hoard.BotSubscription](ctx, tx.q, "subscribe", `
			INSERT INTO bot_subscriptions (user_id, pattern, match_config, match_query, match_like) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (user_id, lower(pattern)) DO NOTHING RETURNING `+subscriptionColumns,
			userID, pattern, config, query, like)
		if hoard.ErrorCode(err) == hoard.ENOTFOUND {
			return hoard.Errorf(hoard.ECONFLICT, "You are already subscribed to %q.", pattern)
		}
		return err
	})
	return sub, err
}

// ListSubscriptions returns a user's subscriptions, oldest first.
func (db *DB) ListSubscriptions(ctx context.Context, userID int64) ([]hoard.BotSubscription, error) {
	return getAll[hoard.BotSubscription](ctx, db.q, "list subscriptions",
		`SELECT `+subscriptionColumns+` FROM bot_subscriptions WHERE user_id = $1 ORDER BY id`, userID)
}

// DeleteSubscription removes a user's subscription to pattern
// (case-insensitively); ENOTFOUND when there is none.
func (db *DB) DeleteSubscription(ctx context.Context, userID int64, pattern string) error {
	tag, err := db.q.Exec(ctx, `DELETE FROM bot_subscriptions WHERE user_id = $1 AND lower(pattern) = lower($2)`,
		userID, strings.TrimSpace(pattern))
	return notFoundIfNone("unsubscribe", tag, err)
}

// DeleteSubscriptionByID removes one of a user's subscriptions; ENOTFOUND
// when the user has no subscription with that id.
func (db *DB) DeleteSubscriptionByID(ctx context.Context, userID, id int64) error {
	tag, err := db.q.Exec(ctx, `DELETE FROM bot_subscriptions WHERE user_id = $1 AND id = $2`, userID, id)
	return notFoundIfNone("unsubscribe", tag, err)
}

// DeleteAllSubscriptions removes every subscription of a user and returns
// how many there were.
func (db *DB) DeleteAllSubscriptions(ctx context.Context, userID int64) (int64, error) {
	tag, err := db.q.Exec(ctx, `DELETE FROM bot_subscriptions WHERE user_id = $1`, userID)
	if err != nil {
		return 0, wrap("unsubscribe all", err)
	}
	return tag.RowsAffected(), nil
}

// PauseSubscriptions pauses every subscription of a user (the user blocked
// the bot: notices would fail).
func (db *DB) PauseSubscriptions(ctx context.Context, userID int64) error {
	_, err := db.q.Exec(ctx, `UPDATE bot_subscriptions SET paused_at = now() WHERE user_id = $1 AND paused_at IS NULL`, userID)
	return wrap("pause subscriptions", err)
}

// queueSubscriberCheck puts a new package in the notifier's inbox, when
// anyone subscribes to anything. It runs in the transaction that indexes
// the package.
func (db *DB) queueSubscriberCheck(ctx context.Context, packageID int64) error {
	_, err := db.q.Exec(ctx, `INSERT INTO bot_notify_inbox (package_id) SELECT $1
		WHERE EXISTS (SELECT 1 FROM bot_subscriptions) ON CONFLICT DO NOTHING`, packageID)
	return wrap("queue subscriber check", err)
}

// NotifyInbox is the state of the notifier's inbox: how many packages
// wait, and how long ago the oldest and the newest arrived (by the
// database's clock).
type NotifyInbox struct {
	Packages                 int
	SinceOldest, SinceNewest time.Duration
}

// FindNotifyInbox returns the state of the notifier's inbox.
func (db *DB) FindNotifyInbox(ctx context.Context) (NotifyInbox, error) {
	var in NotifyInbox
	var oldest, newest float64
	err := db.q.QueryRow(ctx, `SELECT count(*), coalesce(extract(epoch FROM now() - min(queued_at)), 0)::float8,
		coalesce(extract(epoch FROM now() - max(queued_at)), 0)::float8 FROM bot_notify_inbox`).Scan(&in.Packages, &oldest, &newest)
	in.SinceOldest = time.Duration(oldest * float64(time.Second))
	in.SinceNewest = time.Duration(newest * float64(time.Second))
	return in, wrap("read notify inbox", err)
}

// notifyLockKey serialises CollectNotices across processes.
const notifyLockKey int64 = 0x686f617264_0014

// CollectNotices empties the notifier's inbox: for every package in it and
// every unpaused subscription of a linked user that matches it
// (subscriptionMatch) and was not noticed for it before, one notice row,
// with one new digest per user holding all of that user's new notices. It
// returns how many digests it made. Concurrent calls run one at a time.
func (db *DB) CollectNotices(ctx context.Context) (int, error) {
	digests := 0
	err := db.InTx(ctx, func(tx *DB) error {
		if _, err := tx.q.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, notifyLockKey); err != nil {
			return wrap("collect notices: lock", err)
		}
		type match struct {
			SubscriptionID, UserID, PlatformUserID, PackageID int64
		}
		matches, err := getAll[match](ctx, tx.q, "collect notices", `
			WITH inbox AS (DELETE FROM bot_notify_inbox RETURNING package_id)
			SELECT s.id AS subscription_id, s.user_id, l.platform_user_id, p.id AS package_id
			FROM inbox i JOIN packages p ON p.id = i.package_id
			JOIN bot_subscriptions s ON s.paused_at IS NULL
				AND ((s.match_query <> '' AND p.search_vector @@ to_tsquery(s.match_config::regconfig, s.match_query))
				     OR p.file_name ILIKE s.match_like)
			JOIN messenger_links l ON l.user_id = s.user_id
			WHERE NOT EXISTS (SELECT 1 FROM bot_subscription_notices n WHERE n.subscription_id = s.id AND n.package_id = p.id)
			ORDER BY s.user_id, p.id, s.id`)
		if err != nil {
			return err
		}
		var subs, pkgs, owner []int64
		var digestID int64
		for i, m := range matches {
			if i == 0 || m.UserID != matches[i-1].UserID {
				if err := tx.q.QueryRow(ctx, `INSERT INTO bot_notice_digests (user_id, platform_user_id) VALUES ($1, $2) RETURNING id`,
					m.UserID, m.PlatformUserID).Scan(&digestID); err != nil {
					return wrap("collect notices: digest", err)
				}
				digests++
			}
			subs, pkgs, owner = append(subs, m.SubscriptionID), append(pkgs, m.PackageID), append(owner, digestID)
		}
		if len(subs) == 0 {
			return nil
		}
		_, err = tx.q.Exec(ctx, `INSERT INTO bot_subscription_notices (subscription_id, package_id, digest_id)
			SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) ON CONFLICT DO NOTHING`, subs, pkgs, owner)
		return wrap("collect notices: notices", err)
	})
	return digests, err
}

// NoticeDigest is one notice message to send: the packages a user's
// subscriptions matched, each with the patterns that matched it.
type NoticeDigest struct {
	ID             int64
	UserID         int64
	PlatformUserID int64
	Packages       []NoticePackage
}

// NoticePackage is a package announced by a digest.
type NoticePackage struct {
	ID       int64
	FileName string
	Creator  string
	FileSize int64
	Patterns []string
}

// ListUnsentDigests returns up to limit digests not sent yet (oldest
// first) with their packages. A digest whose notices are all gone (their
// subscriptions or packages were deleted) is dropped instead.
func (db *DB) ListUnsentDigests(ctx context.Context, limit int) ([]NoticeDigest, error) {
	if _, err := db.q.Exec(ctx, `DELETE FROM bot_notice_digests d WHERE sent_at IS NULL AND error_message = ''
		AND NOT EXISTS (SELECT 1 FROM bot_subscription_notices n WHERE n.digest_id = d.id)`); err != nil {
		return nil, wrap("list unsent digests", err)
	}
	type row struct {
		DigestID, UserID, PlatformUserID int64
		NoticePackage
	}
	rows, err := getAll[row](ctx, db.q, "list unsent digests", `
		WITH d AS (SELECT * FROM bot_notice_digests WHERE sent_at IS NULL AND error_message = '' ORDER BY id LIMIT $1)
		SELECT d.id AS digest_id, d.user_id, d.platform_user_id, p.id, p.file_name, coalesce(p.creator, '') AS creator,
			p.file_size, array_agg(s.pattern ORDER BY lower(s.pattern)) AS patterns
		FROM d JOIN bot_subscription_notices n ON n.digest_id = d.id
		JOIN packages p ON p.id = n.package_id JOIN bot_subscriptions s ON s.id = n.subscription_id
		GROUP BY d.id, d.user_id, d.platform_user_id, p.id
		ORDER BY d.id, p.id`, max(limit, 1))
	if err != nil {
		return nil, err
	}
	var out []NoticeDigest
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].ID != r.DigestID {
			out = append(out, NoticeDigest{ID: r.DigestID, UserID: r.UserID, PlatformUserID: r.PlatformUserID})
		}
		last := &out[len(out)-1]
		last.Packages = append(last.Packages, r.NoticePackage)
	}
	return out, nil
}

// FinishDigest records a digest as sent (errorMessage "") or as failed for
// good.
func (db *DB) FinishDigest(ctx context.Context, id int64, errorMessage string) error {
	tag, err := db.q.Exec(ctx, `UPDATE bot_notice_digests SET sent_at = CASE WHEN $2 = '' THEN now() END, error_message = $2
		WHERE id = $1`, id, errorMessage)
	return notFoundIfNone("finish notice digest", tag, err)
}
