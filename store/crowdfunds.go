package store

import (
	"context"
	"strings"

	"github.com/hoard/hoard"
)

const crowdfundColumns = `c.id, c.user_id, coalesce(c.host_id, 0) AS host_id, coalesce(h.name, '') AS host_name, c.name, c.link,
	c.files_url, c.delivery_status, c.payment_status, c.notes,
	(SELECT count(*) FROM crowdfund_packages cp WHERE cp.crowdfund_id = c.id) AS package_count, c.created_at, c.updated_at`

// hostColumns are a crowdfund host's columns, in hoard.CrowdfundHost's
// order.
const hostColumns = `id, user_id, name, url, created_at`

// FindOrCreateHost returns the user's host with that name (any letter
// case), creating it when new. Hosts belong to their user: another user's
// host of the same name is another row, never this one.
func (db *DB) FindOrCreateHost(ctx context.Context, userID int64, name string) (*hoard.CrowdfundHost, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, hoard.Errorf(hoard.EINVALID, "The host needs a name.")
	}
	return getOne[hoard.CrowdfundHost](ctx, db.q, "find or create host", `
		WITH ins AS (INSERT INTO crowdfund_hosts (user_id, name) VALUES ($1, $2)
			ON CONFLICT (user_id, lower(name)) DO NOTHING RETURNING `+hostColumns+`)
		SELECT `+hostColumns+` FROM ins
		UNION ALL SELECT `+hostColumns+` FROM crowdfund_hosts WHERE user_id = $1 AND lower(name) = lower($2)
		LIMIT 1`, userID, name)
}

// ListHosts returns the user's hosts by name (the filter and the
// suggestions of their crowdfund pages); other users' hosts are never
// among them.
func (db *DB) ListHosts(ctx context.Context, userID int64) ([]hoard.CrowdfundHost, error) {
	return getAll[hoard.CrowdfundHost](ctx, db.q, "list hosts", `SELECT `+hostColumns+` FROM crowdfund_hosts
		WHERE user_id = $1 ORDER BY lower(name), id`, userID)
}

// CrowdfundFilter narrows ListCrowdfunds; zero fields do not filter.
type CrowdfundFilter struct {
	Delivery hoard.DeliveryStatus
	Payment  hoard.PaymentStatus
	HostID   int64
}

// ListCrowdfunds returns a user's records, newest first.
func (db *DB) ListCrowdfunds(ctx context.Context, userID int64, f CrowdfundFilter) ([]hoard.Crowdfund, error) {
	return getAll[hoard.Crowdfund](ctx, db.q, "list crowdfunds", `
		SELECT `+crowdfundColumns+` FROM crowdfunds c LEFT JOIN crowdfund_hosts h ON h.id = c.host_id
		WHERE c.user_id = $1 AND ($2 = '' OR c.delivery_status = $2) AND ($3 = '' OR c.payment_status = $3)
		  AND ($4::bigint = 0 OR c.host_id = $4)
		ORDER BY c.created_at DESC, c.id DESC`, userID, string(f.Delivery), string(f.Payment), f.HostID)
}

// FindCrowdfund returns a user's record; another user's record is
// ENOTFOUND, exactly like a missing one.
func (db *DB) FindCrowdfund(ctx context.Context, userID, id int64) (*hoard.Crowdfund, error) {
	return getOne[hoard.Crowdfund](ctx, db.q, "find crowdfund", `
		SELECT `+crowdfundColumns+` FROM crowdfunds c LEFT JOIN crowdfund_hosts h ON h.id = c.host_id
		WHERE c.id = $1 AND c.user_id = $2`, id, userID)
}

// SaveCrowdfund inserts a record (c.ID == 0) or updates the user's record c.ID;
// c is filled with the stored row.
func (db *DB) SaveCrowdfund(ctx context.Context, c *hoard.Crowdfund) error {
	if c.DeliveryStatus == "" {
		c.DeliveryStatus = hoard.DeliveryNone
	}
	if c.PaymentStatus == "" {
		c.PaymentStatus = hoard.PaymentUnpaid
	}
	var id int64
	var err error
	if c.ID == 0 {
		err = db.q.QueryRow(ctx, `INSERT INTO crowdfunds (user_id, host_id, name, link, files_url, delivery_status, payment_status, notes)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`, c.UserID, nullInt(c.HostID), c.Name, c.Link, c.FilesURL,
			string(c.DeliveryStatus), string(c.PaymentStatus), c.Notes).Scan(&id)
	} else {
		err = db.q.QueryRow(ctx, `UPDATE crowdfunds SET host_id = $3, name = $4, link = $5, files_url = $6, delivery_status = $7,
			payment_status = $8, notes = $9, updated_at = now() WHERE id = $1 AND user_id = $2 RETURNING id`, c.ID, c.UserID,
			nullInt(c.HostID), c.Name, c.Link, c.FilesURL, string(c.DeliveryStatus), string(c.PaymentStatus), c.Notes).Scan(&id)
	}
	if err != nil {
		return wrap("save crowdfund", err)
	}
	got, err := db.FindCrowdfund(ctx, c.UserID, id)
	if err != nil {
		return err
	}
	*c = *got
	return nil
}

// DeleteCrowdfund removes a user's record and its package links.
func (db *DB) DeleteCrowdfund(ctx context.Context, userID, id int64) error {
	tag, err := db.q.Exec(ctx, `DELETE FROM crowdfunds WHERE id = $1 AND user_id = $2`, id, userID)
	return notFoundIfNone("delete crowdfund", tag, err)
}

// LinkCrowdfundPackages links packages to a user's record (already linked
// ones are fine) and returns how many links were added.
func (db *DB) LinkCrowdfundPackages(ctx context.Context, userID, id int64, packageIDs []int64) (int64, error) {
	if _, err := db.FindCrowdfund(ctx, userID, id); err != nil {
		return 0, err
	}
	tag, err := db.q.Exec(ctx, `INSERT INTO crowdfund_packages (crowdfund_id, package_id)
		SELECT $1, p.id FROM packages p WHERE p.id = ANY($2) ON CONFLICT DO NOTHING`, id, packageIDs)
	if err != nil {
		return 0, wrap("link crowdfund packages", err)
	}
	return tag.RowsAffected(), nil
}

// UnlinkCrowdfundPackage removes one package link of a user's record.
func (db *DB) UnlinkCrowdfundPackage(ctx context.Context, userID, id, packageID int64) error {
	tag, err := db.q.Exec(ctx, `DELETE FROM crowdfund_packages cp USING crowdfunds c
		WHERE cp.crowdfund_id = c.id AND c.id = $1 AND c.user_id = $2 AND cp.package_id = $3`, id, userID, packageID)
	return notFoundIfNone("unlink crowdfund package", tag, err)
}

// ListCrowdfundPackages returns the packages linked to a user's record.
func (db *DB) ListCrowdfundPackages(ctx context.Context, userID, id int64) ([]hoard.Package, error) {
	return getAll[hoard.Package](ctx, db.q, "list crowdfund packages", `
		SELECT `+prefixedPackageColumns+` FROM crowdfund_packages cp
		JOIN crowdfunds c ON c.id = cp.crowdfund_id AND c.user_id = $2
		JOIN packages p ON p.id = cp.package_id
		WHERE cp.crowdfund_id = $1 ORDER BY p.file_name, p.id`, id, userID)
}
