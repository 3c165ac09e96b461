package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/hoard/hoard"
)

// PackageParts returns the destination posts a package was learned to be
// made of (RecordPackageParts), in order: none when they were never
// learned or when the package's posts changed since (a repair).
func (db *DB) PackageParts(ctx context.Context, pkg *hoard.Package) ([]hoard.PackagePart, error) {
	rows, err := db.q.Query(ctx, `SELECT part_no, dest_message_id, name, size FROM package_parts
		WHERE package_id = $1 ORDER BY part_no`, pkg.ID)
	if err != nil {
		return nil, fmt.Errorf("package parts of %d: %w", pkg.ID, err)
	}
	parts, err := pgx.CollectRows(rows, pgx.RowToStructByPos[hoard.PackagePart])
	if err != nil {
		return nil, fmt.Errorf("package parts of %d: %w", pkg.ID, err)
	}
	if !samePosts(parts, pkg.DestMessageIDs) {
		return nil, nil
	}
	return parts, nil
}

// PackagePartsOf returns the learned parts of many packages at once (for
// listings), keyed by package id; packages whose parts are unknown or out
// of date are left out.
func (db *DB) PackagePartsOf(ctx context.Context, pkgs []hoard.Package) (map[int64][]hoard.PackagePart, error) {
	ids := make([]int64, len(pkgs))
	for i, p := range pkgs {
		ids[i] = p.ID
	}
	rows, err := db.q.Query(ctx, `SELECT package_id, part_no, dest_message_id, name, size FROM package_parts
		WHERE package_id = ANY ($1) ORDER BY package_id, part_no`, ids)
	if err != nil {
		return nil, fmt.Errorf("package parts: %w", err)
	}
	defer rows.Close()
	all := map[int64][]hoard.PackagePart{}
	for rows.Next() {
		var id int64
		var p hoard.PackagePart
		if err := rows.Scan(&id, &p.PartNo, &p.DestMessageID, &p.Name, &p.Size); err != nil {
			return nil, fmt.Errorf("package parts: %w", err)
		}
		all[id] = append(all[id], p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("package parts: %w", err)
	}
	for _, pkg := range pkgs {
		if !samePosts(all[pkg.ID], pkg.DestMessageIDs) {
			delete(all, pkg.ID)
		}
	}
	return all, nil
}

// samePosts reports whether parts are exactly the posts ids, in order.
func samePosts(parts []hoard.PackagePart, ids []int64) bool {
	if len(parts) == 0 || len(parts) != len(ids) {
		return false
	}
	for i, p := range parts {
		if p.DestMessageID != ids[i] || p.PartNo != i+1 {
			return false
		}
	}
	return true
}

// RecordPackageParts keeps what a package's destination posts hold, as
// the platform answered: it replaces what was known, and the checksums
// computed from other posts.
func (db *DB) RecordPackageParts(ctx context.Context, packageID int64, parts []hoard.PackagePart) error {
	return db.InTx(ctx, func(tx *DB) error {
		// Two downloads may learn the same package at once: one at a time.
		if _, err := tx.q.Exec(ctx, `SELECT 1 FROM packages WHERE id = $1 FOR UPDATE`, packageID); err != nil {
			return fmt.Errorf("record package parts of %d: %w", packageID, err)
		}
		if _, err := tx.q.Exec(ctx, `DELETE FROM package_parts WHERE package_id = $1`, packageID); err != nil {
			return fmt.Errorf("record package parts of %d: %w", packageID, err)
		}
		ids := make([]int64, len(parts))
		for i, p := range parts {
			ids[i] = p.DestMessageID
			if _, err := tx.q.Exec(ctx, `INSERT INTO package_parts (package_id, part_no, dest_message_id, name, size)
				VALUES ($1, $2, $3, $4, $5)`, packageID, p.PartNo, p.DestMessageID, p.Name, p.Size); err != nil {
				return fmt.Errorf("record package parts of %d: %w", packageID, err)
			}
		}
		if _, err := tx.q.Exec(ctx, `DELETE FROM package_checksums WHERE package_id = $1 AND dest_message_ids <> $2`,
			packageID, ids); err != nil {
			return fmt.Errorf("record package parts of %d: %w", packageID, err)
		}
		return nil
	})
}

// PackageChecksum returns the CRC-32 of a served file of a package (part
// 0: the whole; N: its N-th volume) computed from its current posts.
func (db *DB) PackageChecksum(ctx context.Context, pkg *hoard.Package, part int) (crc uint32, ok bool, err error) {
	var v int64
	var ids []int64
	err = db.q.QueryRow(ctx, `SELECT crc32, dest_message_ids FROM package_checksums WHERE package_id = $1 AND part_no = $2`,
		pkg.ID, part).Scan(&v, &ids)
	switch {
	case err == pgx.ErrNoRows:
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("checksum of package %d part %d: %w", pkg.ID, part, err)
	case !slices.Equal(ids, pkg.DestMessageIDs):
		return 0, false, nil
	}
	return uint32(v), true, nil
}

// RecordPackageChecksum keeps the CRC-32 of a served file of a package,
// computed from its posts destIDs.
func (db *DB) RecordPackageChecksum(ctx context.Context, packageID int64, part int, destIDs []int64, crc uint32) error {
	_, err := db.q.Exec(ctx, `INSERT INTO package_checksums (package_id, part_no, dest_message_ids, crc32)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (package_id, part_no) DO UPDATE SET dest_message_ids = excluded.dest_message_ids, crc32 = excluded.crc32`,
		packageID, part, destIDs, int64(crc))
	if err != nil {
		return fmt.Errorf("record checksum of package %d part %d: %w", packageID, part, err)
	}
	return nil
}
