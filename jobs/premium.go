package jobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
)

// The platform's upload limit follows the account's Premium subscription
// (4,000 parts of 512 KiB, 8,000 with Premium; more is FILE_PARTS_INVALID),
// and a subscription can lapse or start at any time. So a split is planned
// from the account as the platform reports it then, not from the flag read
// at login, and a part the platform refuses as too large is split again at
// the regular limit.

// livePremium reads whether the account writing through wr is Premium now
// (Self) and stores a changed flag. When Self cannot be read the stored
// flag stands: a part planned too large is split again when the upload is
// refused (splitRefusedPart).
func (d *transfers) livePremium(ctx context.Context, wr *channelAccess) bool {
	stored := isPremium(ctx, d.db, wr.m.AccountID)
	self, err := wr.account.Self(ctx)
	if err != nil {
		d.log.Warn("reading the account's Premium state failed; using the stored one", "account", wr.m.AccountID,
			"premium", stored, "err", err)
		return stored
	}
	if self.Premium != stored {
		d.log.Info("the account's Premium state changed", "account", wr.m.AccountID, "premium", self.Premium)
		if err := d.db.SetAccountPremium(ctx, wr.m.AccountID, self.Premium); err != nil {
			d.log.Warn("storing the account's Premium state failed", "account", wr.m.AccountID, "err", err)
		}
	}
	return self.Premium
}

// splitLimitFor is the split limit of the account writing through wr for a
// set whose largest part is largest bytes. A set that fits the regular
// limit fits either way, and the account is not asked.
func (d *transfers) splitLimitFor(ctx context.Context, wr *channelAccess, largest int64) int64 {
	if largest <= d.splitThreshold {
		return d.splitThreshold
	}
	return d.splitLimit(d.livePremium(ctx, wr))
}

// errPartSplit reports that the part a job was posting was split (the
// platform refused it as too large): the job snoozes a moment (no attempt
// spent) and then posts the first piece.
var errPartSplit = errors.New("the part was split")

// splitRefusedPart handles an upload the platform refused as too large
// (FILE_PARTS_INVALID: Premium lapsed since the split was planned): the
// account's state is read again and stored, and the part — never posted —
// is split in place into pieces of the regular limit, named after it
// (<name>.001, .002, … which sort between it and the next part), in one
// transaction that also queues an upload_part job for every piece but the
// first. What was posted stays as it is. It returns errPartSplit when the
// part was split (or changed meanwhile), or refused when the part is no
// larger than the regular limit, which splitting cannot help.
func (d *transfers) splitRefusedPart(ctx context.Context, job *river.Job[hoard.UploadPartArgs], t *hoard.Transfer,
	part *hoard.TransferPart, wr *channelAccess, refused error) error {
	premium := d.livePremium(ctx, wr)
	if part.Length <= d.splitThreshold {
		return refused
	}
	ranges, err := archive.PlanSplit(part.Name, d.splitThreshold, []archive.PartInfo{{Name: part.Name, Size: part.Length}})
	if err != nil {
		return fmt.Errorf("split %s: %w", part.Name, err)
	}
	pieces := make([]hoard.TransferPart, len(ranges))
	for i, r := range ranges {
		pieces[i] = hoard.TransferPart{Name: r.Name, Offset: part.Offset + r.Offset, Length: r.Length}
	}
	err = d.db.InTx(ctx, func(tx *store.DB) error {
		nos, err := tx.SplitTransferPart(ctx, t.ID, part.PartNo, pieces)
		if err != nil {
			return err
		}
		return queueParts(ctx, tx, job.Args.RunID, t.ID, nos, job.MaxAttempts)
	})
	if hoard.ErrorCode(err) == hoard.ECONFLICT {
		return errPartSplit // posted or split by another run of this job meanwhile: the retry sees it
	}
	if err != nil {
		return err
	}
	d.log.Warn("the platform refused a part as too large; split it at the regular limit", "part", part.Name,
		"bytes", part.Length, "pieces", len(pieces), "premium", premium, "err", refused)
	return errPartSplit
}

// isTooLarge reports an upload the platform (or the client's own check)
// refused for its size.
func isTooLarge(err error) bool { return errors.Is(err, messenger.ErrTooLarge) }

// isPremium reports whether an account is Premium (larger uploads); one
// that cannot be read counts as not Premium.
func isPremium(ctx context.Context, db *store.DB, accountID int64) bool {
	acc, err := db.FindAccountByID(ctx, accountID)
	return err == nil && acc.IsPremium
}

// splitLimit is the largest file an account uploads whole: Premium
// accounts have the platform's larger limit.
func (d *transfers) splitLimit(premium bool) int64 {
	if premium {
		return PremiumSplitThreshold
	}
	return d.splitThreshold
}
