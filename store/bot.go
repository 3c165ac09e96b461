package store

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"time"

	"github.com/hoard/hoard"
)

// Kinds of updates ClaimBotUpdate records.
const (
	UpdateMessage  = "m" // a message: chat id and message id
	UpdateCallback = "c" // a button press: chat id and callback query id
)

// ClaimBotUpdate records that the bot answers an update and reports
// whether this caller won it: false when it was answered before, or by a
// concurrent transaction that committed (a concurrent claim waits for the
// other transaction to end). Call it in the transaction that answers, so a
// crash before the commit leaves the update to be answered again. With a
// fromUser (the messenger account that sent a message), a won claim also
// resumes that user's paused subscriptions: they wrote to the bot again.
func (db *DB) ClaimBotUpdate(ctx context.Context, kind string, chatID, updateID, fromUser int64) (bool, error) {
	var won bool
	err := db.q.QueryRow(ctx, `
		WITH claim AS (INSERT INTO bot_handled_updates (kind, chat_id, update_id) VALUES ($1, $2, $3)
			ON CONFLICT DO NOTHING RETURNING 1),
		resume AS (UPDATE bot_subscriptions s SET paused_at = NULL FROM messenger_links l
			WHERE $4::bigint <> 0 AND EXISTS (SELECT 1 FROM claim) AND l.platform_user_id = $4::bigint AND s.user_id = l.user_id
			AND s.paused_at IS NOT NULL)
		SELECT EXISTS (SELECT 1 FROM claim)`, kind, chatID, updateID, fromUser).Scan(&won)
	if err != nil {
		return false, wrap("claim bot update", err)
	}
	return won, nil
}

// BotSearchPage is the paging state of one /search: the query, and the
// cursor that starts each page seen so far (Cursors[0] is nil).
type BotSearchPage struct {
	Token   string
	ChatID  int64
	Query   string
	Cursors []*SearchCursor
}

// CreateBotSearchPage stores the paging state of a new search for ttl.
func (db *DB) CreateBotSearchPage(ctx context.Context, p BotSearchPage, ttl time.Duration) error {
	cursors, err := json.Marshal(p.Cursors)
	if err != nil {
		return err
	}
	_, err = db.q.Exec(ctx, `INSERT INTO bot_search_pages (token, chat_id, query, cursors, expires_at)
		VALUES ($1, $2, $3, $4, now() + $5::interval)`, p.Token, p.ChatID, p.Query, cursors, ttl)
	return wrap("save search page", err)
}

// FindBotSearchPage returns the paging state of a search; ENOTFOUND when
// it does not exist or has expired.
func (db *DB) FindBotSearchPage(ctx context.Context, token string) (*BotSearchPage, error) {
	var p BotSearchPage
	var cursors []byte
	err := db.q.QueryRow(ctx, `SELECT token, chat_id, query, cursors FROM bot_search_pages WHERE token = $1 AND expires_at > now()`,
		token).Scan(&p.Token, &p.ChatID, &p.Query, &cursors)
	if err != nil {
		return nil, wrap("find search page", err)
	}
	if err := json.Unmarshal(cursors, &p.Cursors); err != nil {
		return nil, wrap("find search page: cursors", err)
	}
	return &p, nil
}

// SetBotSearchCursors replaces the cursors of a search's pages.
func (db *DB) SetBotSearchCursors(ctx context.Context, token string, cursors []*SearchCursor) error {
	data, err := json.Marshal(cursors)
	if err != nil {
		return err
	}
	tag, err := db.q.Exec(ctx, `UPDATE bot_search_pages SET cursors = $2 WHERE token = $1`, token, data)
	return notFoundIfNone("save search cursors", tag, err)
}

// AcquireLease takes or renews the lease name for holder until ttl from
// now and reports whether holder has it: it is free, expired, or already
// holder's. Several processes may call it at once; at most one holds the
// lease at any time.
func (db *DB) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	tag, err := db.q.Exec(ctx, `
		INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, clock_timestamp() + $3::interval)
		ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at,
			acquired_at = CASE WHEN leases.holder = EXCLUDED.holder THEN leases.acquired_at ELSE clock_timestamp() END
		WHERE leases.holder = EXCLUDED.holder OR leases.expires_at < clock_timestamp()`, name, holder, ttl)
	if err != nil {
		return false, wrap("acquire lease", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseLease gives the lease up if holder has it, so another process can
// take it at once.
func (db *DB) ReleaseLease(ctx context.Context, name, holder string) error {
	_, err := db.q.Exec(ctx, `DELETE FROM leases WHERE name = $1 AND holder = $2`, name, holder)
	return wrap("release lease", err)
}

// LeaseHolder returns who holds a lease now ("" when nobody does).
func (db *DB) LeaseHolder(ctx context.Context, name string) (string, error) {
	var holder string
	err := db.q.QueryRow(ctx, `SELECT holder FROM leases WHERE name = $1 AND expires_at > clock_timestamp()`, name).Scan(&holder)
	if isNoRows(err) {
		return "", nil
	}
	return holder, wrap("read lease", err)
}

const botStatusColumns = `bot_user_id, username, signed_in, holder, started_at, last_update_at, queue_length,
	can_read_dest, setup_hint, error_message, updated_at`

// SaveBotStatus writes the bot's status row (the answering process does,
// every few seconds).
func (db *DB) SaveBotStatus(ctx context.Context, st hoard.BotStatus) error {
	_, err := db.q.Exec(ctx, `
		INSERT INTO bot_status (singleton, bot_user_id, username, signed_in, holder, started_at, last_update_at, queue_length,
			can_read_dest, setup_hint, error_message, updated_at)
		VALUES (true, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now())
		ON CONFLICT (singleton) DO UPDATE SET bot_user_id = $1, username = $2, signed_in = $3, holder = $4, started_at = $5,
			last_update_at = $6, queue_length = $7, can_read_dest = $8, setup_hint = $9, error_message = $10, updated_at = now()`,
		st.BotUserID, st.Username, st.SignedIn, st.Holder, st.StartedAt, st.LastUpdateAt, st.QueueLength,
		st.CanReadDest, st.SetupHint, st.ErrorMessage)
	return wrap("save bot status", err)
}

// FindBotStatus returns the bot's status row; ENOTFOUND when no bot
// process has run yet.
func (db *DB) FindBotStatus(ctx context.Context) (*hoard.BotStatus, error) {
	return getOne[hoard.BotStatus](ctx, db.q, "find bot status", `SELECT `+botStatusColumns+` FROM bot_status`)
}

// ReserveRate reserves the next request under key for a limit of rate
// requests per second with bursts of up to burst, and returns how long the
// caller must wait before making it. It is one UPDATE (a generic cell rate
// algorithm on the key's row: the theoretical arrival time advances by
// 1/rate per request), so the limit holds across every process sharing the
// database. rate ≤ 0 means unlimited.
func (db *DB) ReserveRate(ctx context.Context, key string, rate float64, burst int) (time.Duration, error) {
	return db.ReserveRateN(ctx, key, rate, burst, 1)
}

// ReserveRateN is ReserveRate for n requests at once (n ≥ 1): it returns
// the wait before the first; the others are allowed 1/rate apart after it.
// Reserving in batches keeps the database out of most requests of a high
// rate.
func (db *DB) ReserveRateN(ctx context.Context, key string, rate float64, burst, n int) (time.Duration, error) {
	if unlimited(rate) {
		return 0, nil
	}
	_, wait, err := db.reserveInTurn(ctx, n, []hoard.RateLimit{{Key: key, Rate: rate, Burst: burst}}, true)
	return wait, err
}

func unlimited(rate float64) bool { return rate <= 0 || math.IsInf(rate, 1) }

// Pacer implements messenger.Pacer and messenger.Reserver on PostgreSQL
// (ReserveRateN), so a rate limit holds across every process that shares
// the database.
type Pacer struct{ db *DB }

// Reserve implements messenger.Reserver.
func (p *Pacer) Reserve(ctx context.Context, key string, rate float64, burst, n int) (time.Duration, error) {
	return p.db.ReserveRateN(ctx, key, rate, burst, n)
}

// NewPacer returns a Pacer on db.
func NewPacer(db *DB) *Pacer { return &Pacer{db: db} }

// WaitN implements messenger.Pacer. Two limits at a time are reserved in
// one statement (the second only when the first's slots are due now, as
// WaitN's turn asks), so a message under a chat's and the bot's limits
// costs one round trip when neither makes it wait. A request reserved and
// then abandoned (ctx ended) still counts against the limits.
func (p *Pacer) WaitN(ctx context.Context, n int, limits ...hoard.RateLimit) error {
	limits = slices.DeleteFunc(slices.Clone(limits), func(l hoard.RateLimit) bool { return unlimited(l.Rate) })
	for len(limits) > 0 {
		reserved, wait, err := p.db.reserveInTurn(ctx, n, limits, false)
		if err != nil {
			return err
		}
		limits = limits[reserved:]
		if wait > 0 {
			if err := sleepCtx(ctx, wait); err != nil {
				return err
			}
		}
	}
	return nil
}

// reserveInTurnSQL reserves $1 slots under a first key ($2, slots $3
// apart) and, when the first key's wait is 0, under a second ($5, slots
// $6 apart; a NULL key is none), in one statement: a generic cell rate
// algorithm on each key's row, whose theoretical arrival time advances by
// the slots' time. Each wait is until the theoretical arrival time less
// the key's allowance ($4, $7: the burst, and for the first of the slots
// the other slots too); the second's is NULL when it was not reserved.
const reserveInTurnSQL = `WITH a AS (
		INSERT INTO rate_limits AS r (key, tat) VALUES ($2, clock_timestamp() + $3::interval * $1)
		ON CONFLICT (key) DO UPDATE SET tat = greatest(r.tat, clock_timestamp()) + $3::interval * $1
		RETURNING greatest(0, (extract(epoch FROM r.tat - $4::interval - clock_timestamp()) * 1e6)::bigint) AS wait
	), b AS (
		INSERT INTO rate_limits AS r (key, tat) SELECT $5, clock_timestamp() + $6::interval * $1 FROM a WHERE a.wait = 0 AND $5::text IS NOT NULL
		ON CONFLICT (key) DO UPDATE SET tat = greatest(r.tat, clock_timestamp()) + $6::interval * $1
		RETURNING greatest(0, (extract(epoch FROM r.tat - $7::interval - clock_timestamp()) * 1e6)::bigint) AS wait
	)
	SELECT a.wait, (SELECT b.wait FROM b) FROM a`

// reserveInTurn reserves n slots under limits[0] and, when they are due
// now, under limits[1]; it returns how many limits it reserved (1 or 2)
// and the wait until the last of their slots, or with untilFirst until
// the first (the others follow 1/rate apart). The rates must be limited.
func (db *DB) reserveInTurn(ctx context.Context, n int, limits []hoard.RateLimit, untilFirst bool) (int, time.Duration, error) {
	n = max(n, 1)
	type slots struct {
		key              *string
		apart, allowance time.Duration
	}
	of := func(l *hoard.RateLimit) slots {
		apart := time.Duration(float64(time.Second) / l.Rate)
		allowed := max(l.Burst, 1)
		if untilFirst {
			allowed += n - 1
		}
		return slots{&l.Key, apart, apart * time.Duration(allowed)}
	}
	first, second := of(&limits[0]), slots{}
	if len(limits) > 1 {
		second = of(&limits[1])
	}
	var firstWait int64
	var secondWait *int64
	err := db.q.QueryRow(ctx, reserveInTurnSQL, n, first.key, first.apart, first.allowance,
		second.key, second.apart, second.allowance).Scan(&firstWait, &secondWait)
	if err != nil {
		return 0, 0, wrap("reserve rate", err)
	}
	if secondWait == nil {
		return 1, time.Duration(firstWait) * time.Microsecond, nil
	}
	return 2, time.Duration(*secondWait) * time.Microsecond, nil
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
