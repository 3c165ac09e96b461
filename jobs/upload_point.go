package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
)

// uploadTries is how many times one attempt resumes a failed upload.
const uploadTries = 3

// An upload in progress records how far the platform has stored it every
// uploadPointParts parts (4 MiB) or uploadPointEvery, whichever comes
// first: a killed worker loses at most that much.
const (
	uploadPointParts = 8
	uploadPointEvery = 2 * time.Second
)

// uploader uploads a part's bytes from the spool and posts them,
// resumably: where an upload stands is kept on the part's row.
type uploader struct {
	db      *store.DB
	log     *slog.Logger
	metrics Metrics
	// pointLife is Deps.UploadPointLife (an hour when 0); now is the clock
	// (time.Now when nil).
	pointLife time.Duration
	now       func() time.Time
}

// upload uploads a part's byte range of the spool files and posts it,
// returning the destination message id. Where the upload stands is kept on
// the part's row (store.SaveUploadPoint) while it runs and when it stops,
// so that the next attempt — after a long FLOOD_WAIT snoozed the job, a
// failed attempt or a restart of the worker — continues from the parts the
// platform stores instead of from part 0, for UploadPointLife. When the
// platform lost them meanwhile (FILE_PART_X_MISSING) the adapter uploads
// the whole file once more. Within an attempt an interrupted upload is
// resumed up to uploadTries times; a rate limit and a refusal as too large
// end the attempt at once.
func (d *uploader) upload(ctx context.Context, t *hoard.Transfer, part *hoard.TransferPart, wr *channelAccess, ft *fileTracker) (int64, error) {
	ft.phase(ctx, hoard.PhaseUploading, part.PartNo+1, t.PartsTotal, part.Length)
	parts, err := archive.OpenParts(t.SpoolPaths...)
	if err != nil {
		return 0, fmt.Errorf("spool of %s: %w", part.Name, err)
	}
	defer parts.Close()
	section := func() *io.SectionReader {
		return parts.Section(archive.Range{Name: part.Name, Offset: part.Offset, Length: part.Length})
	}
	keep := d.pointKeeper(ctx, part)
	progress := func(r messenger.UploadResume) {
		ft.progress(ctx, min(int64(r.PartsDone)*messenger.UploadPartSize, part.Length))
		keep(r)
	}
	req := messenger.UploadRequest{Channel: wr.peer, Data: section(), FileName: part.Name,
		Premium: isPremium(ctx, d.db, t.AccountID), Resume: d.storedPoint(part), Progress: progress}
	for try := 1; ; try++ {
		id, err := wr.account.Upload(ctx, req)
		if err == nil {
			d.metrics.Uploaded(part.Length)
			d.keepPoint(context.WithoutCancel(ctx), part, messenger.UploadResume{}) // used up
			return int64(id), nil
		}
		var ue *messenger.UploadError
		if !errors.As(err, &ue) {
			// Refused as posted (a 400 of sendMedia, parts gone even after
			// the adapter's one upload from part 0): no point is worth
			// keeping, the next attempt starts afresh.
			d.keepPoint(context.WithoutCancel(ctx), part, messenger.UploadResume{})
			return 0, err
		}
		d.keepPoint(context.WithoutCancel(ctx), part, ue.Resume)
		if rateLimited(err) || isTooLarge(err) || try >= uploadTries || ctx.Err() != nil {
			return 0, err
		}
		d.log.Warn("upload interrupted; resuming", "part", part.Name, "parts_done", ue.Resume.PartsDone, "try", try, "err", err)
		req.Resume = &ue.Resume
		req.Data = section()
	}
}

// storedPoint is the part's stored resume point when it is still worth
// trying (younger than UploadPointLife), else nil: the upload starts at
// part 0.
func (d *uploader) storedPoint(part *hoard.TransferPart) *messenger.UploadResume {
	p := part.UploadPoint
	if p.UploadFileID == 0 || p.UploadSavedAt == nil {
		return nil
	}
	now, life := time.Now, cmp.Or(d.pointLife, time.Hour) // Deps built without defaults (tests)
	if d.now != nil {
		now = d.now
	}
	if age := now().Sub(*p.UploadSavedAt); age > life {
		d.log.Info("the upload's resume point is too old to try; uploading from part 0", "part", part.Name,
			"parts_done", p.UploadPartsDone, "age", age.Round(time.Second))
		return nil
	}
	d.log.Info("resuming an upload from its stored point", "part", part.Name, "parts_done", p.UploadPartsDone)
	return &messenger.UploadResume{FileID: p.UploadFileID, PartsDone: p.UploadPartsDone}
}

// pointKeeper returns the Progress function of a part's upload: it records
// the point reached every uploadPointParts parts or uploadPointEvery.
func (d *uploader) pointKeeper(ctx context.Context, part *hoard.TransferPart) func(messenger.UploadResume) {
	var (
		mu       sync.Mutex
		at       time.Time
		recorded messenger.UploadResume
	)
	return func(r messenger.UploadResume) {
		mu.Lock()
		defer mu.Unlock()
		if r.FileID == recorded.FileID && r.PartsDone-recorded.PartsDone < uploadPointParts && time.Since(at) < uploadPointEvery {
			return
		}
		at, recorded = time.Now(), r
		d.keepPoint(ctx, part, r)
	}
}

// keepPoint records a part's upload point (the zero point forgets it). A
// failure only costs a resume, so it is logged, not returned.
func (d *uploader) keepPoint(ctx context.Context, part *hoard.TransferPart, r messenger.UploadResume) {
	if err := d.db.SaveUploadPoint(ctx, part.TransferID, part.PartNo, r.FileID, r.PartsDone); err != nil && ctx.Err() == nil {
		d.log.Warn("recording the upload's resume point failed", "part", part.Name, "err", err)
	}
}
