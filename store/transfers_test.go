package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// newHash returns a content hash no other test uses (transfers of one hash
// are serialised by an advisory lock, so parallel tests must not share one).
func newHash() string { return fmt.Sprintf("%064x", seq.Add(1)) }

// pendingTransfer returns an unsaved transfer of a new source set (its own
// source and destination channels and account) with a unique content hash.
func pendingTransfer(t *testing.T, db *store.DB, mutate ...func(*hoard.Transfer)) *hoard.Transfer {
	t.Helper()
	n := seq.Add(1)
	tr := &hoard.Transfer{
		SourceChannelID: mustChannel(t, db).ID,
		SourceMessageID: n,
		AccountID:       mustAccount(t, db).ID,
		DestChannelID:   mustChannel(t, db, destChannel).ID,
		SpoolPaths:      []string{fmt.Sprintf("/spool/%d.zip", n)},
		ContentHash:     newHash(),
		Draft:           hoard.Package{FileName: fmt.Sprintf("Set %d.zip", n), FileSize: 30, ArchiveType: hoard.ArchiveZIP},
	}
	for _, m := range mutate {
		m(tr)
	}
	return tr
}

// threeParts splits 30 bytes into three named parts.
func threeParts() []hoard.TransferPart {
	return []hoard.TransferPart{
		{Name: "set.zip.001", Offset: 0, Length: 10},
		{Name: "set.zip.002", Offset: 10, Length: 10},
		{Name: "set.zip.003", Offset: 20, Length: 10},
	}
}

// mustTransfer stores a pending transfer with three parts.
func mustTransfer(t *testing.T, db *store.DB, mutate ...func(*hoard.Transfer)) *hoard.Transfer {
	t.Helper()
	tr := pendingTransfer(t, db, mutate...)
	if err := db.CreateTransfer(context.Background(), tr, threeParts()); err != nil {
		t.Fatalf("CreateTransfer: %v", err)
	}
	return tr
}

// mustUploadFile stores a manual upload with one file.
func mustUploadFile(t *testing.T, db *store.DB) *hoard.ManualUploadFile {
	t.Helper()
	ctx := context.Background()
	u := linkUser(t, db, fmt.Sprintf("uploader%d@example.com", seq.Add(1)))
	up, err := db.CreateManualUpload(ctx, u.ID, "")
	must(t, err)
	f, err := db.AddManualUploadFile(ctx, up.ID, "upload.zip", fmt.Sprintf("%d/1", up.ID), 30)
	must(t, err)
	return f
}

func countRows(t *testing.T, db *store.DB, table string) int64 {
	t.Helper()
	n, err := db.CountRows(context.Background(), table)
	must(t, err)
	return n
}

// riverJob is a river_job row written with plain SQL: the store reads River's
// table directly, and tests need states no client would leave behind.
type riverJob struct {
	Kind        string
	State       string // default available
	Args        any    // JSON-encoded; default {}
	Attempt     int
	AttemptedBy []string
	Errors      []string  // JSON objects
	ScheduledAt time.Time // default 2000-01-01
}

// mustRiverJob inserts j into river_job (scheduled in 2000, so that a
// rescheduled job is visible) and returns its id.
func mustRiverJob(t *testing.T, db *store.DB, j riverJob) int64 {
	t.Helper()
	if j.State == "" {
		j.State = "available"
	}
	args := []byte("{}")
	if j.Args != nil {
		var err error
		if args, err = json.Marshal(j.Args); err != nil {
			t.Fatal(err)
		}
	}
	var scheduled *time.Time
	if !j.ScheduledAt.IsZero() {
		scheduled = &j.ScheduledAt
	}
	var id int64
	err := db.Tx().QueryRow(context.Background(), `
		INSERT INTO river_job (kind, state, args, attempt, attempted_at, attempted_by, errors, max_attempts, queue,
			scheduled_at, finalized_at)
		VALUES ($1, $2::river_job_state, $3::jsonb, $4::smallint, CASE WHEN $4::smallint > 0 THEN now() END, $5, $6::text[]::jsonb[], 5, 'default',
			coalesce($7::timestamptz, '2000-01-01T00:00:00Z'), CASE WHEN $2 IN ('completed', 'cancelled', 'discarded') THEN now() END)
		RETURNING id`, j.Kind, j.State, string(args), j.Attempt, j.AttemptedBy, j.Errors, scheduled).Scan(&id)
	if err != nil {
		t.Fatalf("insert river_job %+v: %v", j, err)
	}
	return id
}

func TestCreateTransfer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("stores the transfer and its parts in order", func(t *testing.T) {
		t.Parallel()
		db := storetest.NewTx(t)
		tr := pendingTransfer(t, db, func(tr *hoard.Transfer) {
			tr.SpoolPaths = []string{"/spool/a.zip.001", "/spool/a.zip.002"}
			tr.KeepFiles = true
			tr.PreviewData = []byte{0xff, 0xd8}
			tr.Draft.Tags = []string{"STL"}
			tr.Draft.Creator = "Mammoth"
		})
		parts := []hoard.TransferPart{
			{Name: "a.zip.001", ResendMessageID: 41, Length: 7},
			{Name: "a.zip.002", Offset: 7, Length: 5},
			{Name: "a.zip.003", Offset: 12, Length: 1},
		}
		must(t, db.CreateTransfer(ctx, tr, parts))
		if tr.ID == 0 || tr.Status != hoard.TransferPublishing || tr.PartsTotal != 3 || tr.CreatedAt.IsZero() {
			t.Fatalf("created transfer = %+v", tr)
		}
		for name, find := range map[string]func() (*hoard.Transfer, error){
			"id": func() (*hoard.Transfer, error) { return db.FindTransfer(ctx, tr.ID) },
			"source": func() (*hoard.Transfer, error) {
				return db.FindTransferBySource(ctx, tr.SourceChannelID, tr.SourceMessageID)
			},
		} {
			got, err := find()
			must(t, err)
			type found struct {
				ID, SourceChannelID, SourceMessageID, ManualUploadFileID, IngestionRunID, AccountID, DestChannelID int64
				Status                                                                                             hoard.TransferStatus
				SpoolPaths, DraftTags                                                                              []string
				KeepFiles                                                                                          bool
				ContentHash, DraftFileName, DraftCreator, ErrorMessage                                             string
				PreviewData                                                                                        []byte
				PartsTotal                                                                                         int
			}
			want := found{tr.ID, tr.SourceChannelID, tr.SourceMessageID, 0, 0, tr.AccountID, tr.DestChannelID, hoard.TransferPublishing,
				tr.SpoolPaths, []string{"STL"}, true, tr.ContentHash, tr.Draft.FileName, "Mammoth", "", []byte{0xff, 0xd8}, 3}
			have := found{got.ID, got.SourceChannelID, got.SourceMessageID, got.ManualUploadFileID, got.IngestionRunID, got.AccountID,
				got.DestChannelID, got.Status, got.SpoolPaths, got.Draft.Tags, got.KeepFiles, got.ContentHash, got.Draft.FileName,
				got.Draft.Creator, got.ErrorMessage, got.PreviewData, got.PartsTotal}
			if diff := cmp.Diff(want, have); diff != "" {
				t.Errorf("find by %s (-want +got):\n%s", name, diff)
			}
		}
		_, err := db.FindTransferBySource(ctx, tr.SourceChannelID, tr.SourceMessageID+1)
		wantCode(t, err, hoard.ENOTFOUND)
		_, err = db.FindTransfer(ctx, -1)
		wantCode(t, err, hoard.ENOTFOUND)

		got, err := db.ListTransferParts(ctx, tr.ID)
		must(t, err)
		if len(got) != len(parts) {
			t.Fatalf("parts = %+v", got)
		}
		for i, p := range got {
			want := parts[i]
			want.TransferID, want.PartNo = tr.ID, i
			if p != want {
				t.Errorf("part %d = %+v, want %+v", i, p, want)
			}
		}
		p, err := db.FindTransferPart(ctx, tr.ID, 1)
		must(t, err)
		if p.Name != "a.zip.002" || p.Offset != 7 || p.Length != 5 || p.PartNo != 1 {
			t.Fatalf("FindTransferPart(1) = %+v", p)
		}
		_, err = db.FindTransferPart(ctx, tr.ID, 3)
		wantCode(t, err, hoard.ENOTFOUND)
	})

	t.Run("no parts", func(t *testing.T) {
		t.Parallel()
		db := storetest.NewTx(t)
		tr := pendingTransfer(t, db)
		wantCode(t, db.CreateTransfer(ctx, tr, nil), hoard.EINVALID)
		if n := countRows(t, db, "transfers"); n != 0 {
			t.Fatalf("%d transfers stored", n)
		}
	})

	t.Run("one transfer per source set", func(t *testing.T) {
		t.Parallel()
		db := storetest.NewTx(t)
		first := mustTransfer(t, db)
		for _, hash := range []string{first.ContentHash, newHash()} {
			again := pendingTransfer(t, db, func(tr *hoard.Transfer) {
				tr.SourceChannelID, tr.SourceMessageID, tr.ContentHash = first.SourceChannelID, first.SourceMessageID, hash
			})
			err := db.CreateTransfer(ctx, again, threeParts())
			wantCode(t, err, hoard.ECONFLICT)
			if errors.Is(err, store.ErrSameContent) {
				t.Fatalf("retry of the same source reported as the same content: %v", err)
			}
		}
		// Even a failed transfer holds its source set until it is deleted.
		must(t, db.SetTransferStatus(ctx, first.ID, hoard.TransferFailed, "gone"))
		again := pendingTransfer(t, db, func(tr *hoard.Transfer) {
			tr.SourceChannelID, tr.SourceMessageID = first.SourceChannelID, first.SourceMessageID
		})
		wantCode(t, db.CreateTransfer(ctx, again, threeParts()), hoard.ECONFLICT)
		must(t, db.DeleteTransfer(ctx, first.ID))
		must(t, db.CreateTransfer(ctx, again, threeParts()))
		if n := countRows(t, db, "transfers"); n != 1 {
			t.Fatalf("%d transfers stored, want 1", n)
		}
	})

	t.Run("one transfer per upload file", func(t *testing.T) {
		t.Parallel()
		db := storetest.NewTx(t)
		f := mustUploadFile(t, db)
		upload := func(tr *hoard.Transfer) {
			tr.SourceChannelID, tr.SourceMessageID, tr.ManualUploadFileID, tr.KeepFiles = 0, 0, f.ID, true
		}
		tr := mustTransfer(t, db, upload)
		got, err := db.FindTransferByUploadFile(ctx, f.ID)
		must(t, err)
		if got.ID != tr.ID || got.ManualUploadFileID != f.ID || got.SourceChannelID != 0 || got.SourceMessageID != 0 {
			t.Fatalf("FindTransferByUploadFile = %+v", got)
		}
		_, err = db.FindTransferByUploadFile(ctx, -1)
		wantCode(t, err, hoard.ENOTFOUND)
		again := pendingTransfer(t, db, upload, func(again *hoard.Transfer) { again.ContentHash = tr.ContentHash })
		err = db.CreateTransfer(ctx, again, threeParts())
		wantCode(t, err, hoard.ECONFLICT)
		if errors.Is(err, store.ErrSameContent) {
			t.Fatalf("retry of the same upload file reported as the same content: %v", err)
		}
	})
}

func TestCreateTransferSameContent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		// holder stores what may already hold hash, apart from the new
		// transfer's source set.
		holder   func(t *testing.T, db *store.DB, hash string)
		wantSame bool
	}{
		{"nothing", func(*testing.T, *store.DB, string) {}, false},
		{"published package", func(t *testing.T, db *store.DB, hash string) {
			dest := mustChannel(t, db, destChannel)
			mustPackage(t, db, func(p *hoard.Package) {
				p.ContentHash, p.DestChannelID, p.DestMessageID, p.DestMessageIDs = hash, dest.ID, 5, []int64{5}
			})
		}, true},
		{"package awaiting repair (no destination)", func(t *testing.T, db *store.DB, hash string) {
			mustPackage(t, db, func(p *hoard.Package) { p.ContentHash = hash })
		}, false},
		{"publishing transfer of another source set", func(t *testing.T, db *store.DB, hash string) {
			mustTransfer(t, db, func(tr *hoard.Transfer) { tr.ContentHash = hash })
		}, true},
		{"verifying transfer of another source set", func(t *testing.T, db *store.DB, hash string) {
			tr := mustTransfer(t, db, func(tr *hoard.Transfer) { tr.ContentHash = hash })
			must(t, db.SetTransferStatus(context.Background(), tr.ID, hoard.TransferVerifying, ""))
		}, true},
		{"transfer of an upload file", func(t *testing.T, db *store.DB, hash string) {
			f := mustUploadFile(t, db)
			mustTransfer(t, db, func(tr *hoard.Transfer) {
				tr.SourceChannelID, tr.SourceMessageID, tr.ManualUploadFileID, tr.ContentHash = 0, 0, f.ID, hash
			})
		}, true},
		{"failed transfer of another source set", func(t *testing.T, db *store.DB, hash string) {
			tr := mustTransfer(t, db, func(tr *hoard.Transfer) { tr.ContentHash = hash })
			must(t, db.SetTransferStatus(context.Background(), tr.ID, hoard.TransferFailed, "hash mismatch"))
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := storetest.NewTx(t)
			hash := newHash()
			tt.holder(t, db, hash)
			before := countRows(t, db, "transfers")
			tr := pendingTransfer(t, db, func(tr *hoard.Transfer) { tr.ContentHash = hash })
			err := db.CreateTransfer(ctx, tr, threeParts())
			if !tt.wantSame {
				must(t, err)
				if n := countRows(t, db, "transfers"); n != before+1 {
					t.Fatalf("transfers: %d, want %d", n, before+1)
				}
				return
			}
			if !errors.Is(err, store.ErrSameContent) {
				t.Fatalf("CreateTransfer = %v, want ErrSameContent", err)
			}
			if n := countRows(t, db, "transfers"); n != before {
				t.Fatalf("transfers: %d, want %d (nothing inserted)", n, before)
			}
			_, err = db.FindTransferBySource(ctx, tr.SourceChannelID, tr.SourceMessageID)
			wantCode(t, err, hoard.ENOTFOUND)
		})
	}
}

// TestCreateTransferConcurrentSameContent downloads the same bytes from two
// source sets at once: the advisory lock lets exactly one publish them.
func TestCreateTransferConcurrentSameContent(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	const rounds = 5
	for round := range rounds {
		hash := newHash()
		trs := []*hoard.Transfer{
			pendingTransfer(t, db, func(tr *hoard.Transfer) { tr.ContentHash = hash }),
			pendingTransfer(t, db, func(tr *hoard.Transfer) { tr.ContentHash = hash }),
		}
		errs := make([]error, len(trs))
		var start, wg sync.WaitGroup
		start.Add(1)
		for i, tr := range trs {
			wg.Go(func() {
				start.Wait()
				errs[i] = db.CreateTransfer(ctx, tr, threeParts())
			})
		}
		start.Done()
		wg.Wait()
		ok, same := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, store.ErrSameContent):
				same++
			default:
				t.Fatalf("round %d: unexpected error %v", round, err)
			}
		}
		if ok != 1 || same != 1 {
			t.Fatalf("round %d: %d succeeded, %d same content; want exactly one each (%v)", round, ok, same, errs)
		}
	}
	if n := countRows(t, db, "transfers"); n != rounds {
		t.Fatalf("%d transfers stored, want %d", n, rounds)
	}
}

func TestTransferPartProgress(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	tr := mustTransfer(t, db)
	part := func(no int) hoard.TransferPart {
		t.Helper()
		p, err := db.FindTransferPart(ctx, tr.ID, no)
		must(t, err)
		return *p
	}

	// Posting begins: the newest destination id is remembered, and the
	// first one recorded stays (the post may be from that attempt).
	must(t, db.MarkTransferPartPosting(ctx, tr.ID, 0, 100))
	must(t, db.MarkTransferPartPosting(ctx, tr.ID, 0, 120))
	if p := part(0); p.DestAfterID != 100 || p.DestMessageID != 0 {
		t.Fatalf("marked part = %+v", p)
	}

	steps := []struct {
		part          int
		destMessageID int64
		wantRemaining int
	}{
		{0, 101, 2},
		{2, 103, 1},
		{0, 101, 1}, // a retried part is counted once
		{1, 102, 0},
	}
	for _, s := range steps {
		remaining, err := db.RecordTransferPart(ctx, tr.ID, s.part, s.destMessageID)
		must(t, err)
		if remaining != s.wantRemaining {
			t.Fatalf("RecordTransferPart(%d, %d) remaining = %d, want %d", s.part, s.destMessageID, remaining, s.wantRemaining)
		}
		if p := part(s.part); p.DestMessageID != s.destMessageID {
			t.Fatalf("part %d = %+v", s.part, p)
		}
	}

	// A vanished post is forgotten and posted again.
	must(t, db.ClearTransferPart(ctx, tr.ID, 0))
	if p := part(0); p.DestMessageID != 0 || p.DestAfterID != 0 {
		t.Fatalf("cleared part = %+v", p)
	}
	if p := part(1); p.DestMessageID != 102 {
		t.Fatalf("another part was cleared: %+v", p)
	}
	must(t, db.MarkTransferPartPosting(ctx, tr.ID, 0, 130))
	if p := part(0); p.DestAfterID != 130 {
		t.Fatalf("re-marked part = %+v", p)
	}
	remaining, err := db.RecordTransferPart(ctx, tr.ID, 0, 131)
	must(t, err)
	if remaining != 0 {
		t.Fatalf("remaining after re-posting = %d", remaining)
	}

	for name, err := range map[string]error{
		"mark unknown part":     db.MarkTransferPartPosting(ctx, tr.ID, 9, 1),
		"clear unknown part":    db.ClearTransferPart(ctx, tr.ID, 9),
		"clear unknown":         db.ClearTransferPart(ctx, -1, 0),
		"record unknown part":   errOnly(db.RecordTransferPart(ctx, tr.ID, 9, 1)),
		"record unknown":        errOnly(db.RecordTransferPart(ctx, -1, 0, 1)),
		"status of unknown":     db.SetTransferStatus(ctx, -1, hoard.TransferFailed, ""),
		"delete unknown":        db.DeleteTransfer(ctx, -1),
		"find unknown part":     errOnly(db.FindTransferPart(ctx, -1, 0)),
		"mark unknown transfer": db.MarkTransferPartPosting(ctx, -1, 0, 1),
	} {
		if hoard.ErrorCode(err) != hoard.ENOTFOUND {
			t.Errorf("%s: err = %v, want not found", name, err)
		}
	}
}

// errOnly drops the value of a (value, error) result.
func errOnly[T any](_ T, err error) error { return err }

// TestRecordTransferPartFanIn posts every part of a transfer at once, each in
// its own transaction as upload_part jobs do: exactly one sees 0 remaining.
func TestRecordTransferPartFanIn(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()
	const parts = 8
	for round := range 3 {
		tr := pendingTransfer(t, db)
		list := make([]hoard.TransferPart, parts)
		for i := range list {
			list[i] = hoard.TransferPart{Name: fmt.Sprintf("set.zip.%03d", i+1), Offset: int64(i), Length: 1}
		}
		must(t, db.CreateTransfer(ctx, tr, list))
		remaining := make([]int, parts)
		errs := make([]error, parts)
		var start, wg sync.WaitGroup
		start.Add(1)
		for i := range parts {
			wg.Go(func() {
				start.Wait()
				errs[i] = db.InTx(ctx, func(tx *store.DB) error {
					var err error
					remaining[i], err = tx.RecordTransferPart(ctx, tr.ID, i, int64(1000+i))
					return err
				})
			})
		}
		start.Done()
		wg.Wait()
		must(t, errors.Join(errs...))
		slices.Sort(remaining)
		// Serialised on the transfer row, each part sees a different count.
		want := make([]int, parts)
		for i := range want {
			want[i] = i
		}
		if !slices.Equal(remaining, want) {
			t.Fatalf("round %d: remaining counts = %v, want each of %v once (one 0: one fan-in)", round, remaining, want)
		}
	}
}

func TestTransferStatusAndDelete(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	trs := make([]*hoard.Transfer, 4)
	for i := range trs {
		trs[i] = mustTransfer(t, db)
	}
	unfinished := func() []int64 {
		t.Helper()
		list, err := db.ListUnfinishedTransfers(ctx)
		must(t, err)
		var ids []int64
		for _, tr := range list {
			ids = append(ids, tr.ID)
		}
		return ids
	}
	if got, want := unfinished(), []int64{trs[0].ID, trs[1].ID, trs[2].ID, trs[3].ID}; !slices.Equal(got, want) {
		t.Fatalf("unfinished = %v, want %v", got, want)
	}

	tests := []struct {
		tr      int
		status  hoard.TransferStatus
		message string
	}{
		{1, hoard.TransferVerifying, ""},
		{2, hoard.TransferFailed, "hash mismatch"},
		{3, hoard.TransferDone, ""},
	}
	for _, tt := range tests {
		must(t, db.SetTransferStatus(ctx, trs[tt.tr].ID, tt.status, tt.message))
		got, err := db.FindTransfer(ctx, trs[tt.tr].ID)
		must(t, err)
		if got.Status != tt.status || got.ErrorMessage != tt.message {
			t.Errorf("transfer %d = %s %q, want %s %q", tt.tr, got.Status, got.ErrorMessage, tt.status, tt.message)
		}
	}
	if got, want := unfinished(), []int64{trs[0].ID, trs[1].ID}; !slices.Equal(got, want) {
		t.Fatalf("unfinished = %v, want %v (publishing and verifying, oldest first)", got, want)
	}
	// Back to publishing (recovery found a part missing) clears the error.
	must(t, db.SetTransferStatus(ctx, trs[2].ID, hoard.TransferPublishing, ""))
	if got, _ := db.FindTransfer(ctx, trs[2].ID); got.Status != hoard.TransferPublishing || got.ErrorMessage != "" {
		t.Fatalf("republished transfer = %+v", got)
	}
	err := savepoint(db, func(tx *store.DB) error { return tx.SetTransferStatus(ctx, trs[0].ID, "LOST", "") })
	wantCode(t, err, hoard.EINVALID)

	// Deleting removes the parts too.
	must(t, db.DeleteTransfer(ctx, trs[0].ID))
	_, err = db.FindTransfer(ctx, trs[0].ID)
	wantCode(t, err, hoard.ENOTFOUND)
	parts, err := db.ListTransferParts(ctx, trs[0].ID)
	must(t, err)
	if len(parts) != 0 {
		t.Fatalf("parts left after delete: %+v", parts)
	}
	var left int
	must(t, db.Tx().QueryRow(ctx, `SELECT count(*) FROM transfer_parts WHERE transfer_id = $1`, trs[0].ID).Scan(&left))
	if left != 0 {
		t.Fatalf("%d part rows left", left)
	}
	if got, want := unfinished(), []int64{trs[1].ID, trs[2].ID}; !slices.Equal(got, want) {
		t.Fatalf("unfinished after delete = %v, want %v", got, want)
	}
	wantCode(t, db.DeleteTransfer(ctx, trs[0].ID), hoard.ENOTFOUND)
	if parts, _ := db.ListTransferParts(ctx, trs[1].ID); len(parts) != 3 {
		t.Fatalf("another transfer's parts = %+v", parts)
	}
}

func TestDestinationMessages(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	dest := mustChannel(t, db, destChannel)
	other := mustChannel(t, db, destChannel)

	newest := func(ch int64) int64 {
		t.Helper()
		id, err := db.FindNewestDestMessageID(ctx, ch)
		must(t, err)
		return id
	}
	if id := newest(dest.ID); id != 0 {
		t.Fatalf("empty destination: newest = %d", id)
	}

	// An indexed package counts with its first part's id.
	mustPackage(t, db, func(p *hoard.Package) {
		p.DestChannelID, p.DestMessageID, p.DestMessageIDs = dest.ID, 50, []int64{50, 51, 52}
	})
	mustPackage(t, db, func(p *hoard.Package) {
		p.DestChannelID, p.DestMessageID, p.DestMessageIDs = other.ID, 500, []int64{500}
	})
	if id := newest(dest.ID); id != 50 {
		t.Fatalf("newest = %d, want 50", id)
	}
	// A transfer's posted part counts; a part only being posted does not.
	tr := mustTransfer(t, db, func(tr *hoard.Transfer) { tr.DestChannelID = dest.ID })
	_, err := db.RecordTransferPart(ctx, tr.ID, 0, 60)
	must(t, err)
	must(t, db.MarkTransferPartPosting(ctx, tr.ID, 1, 60))
	elsewhere := mustTransfer(t, db, func(tr *hoard.Transfer) { tr.DestChannelID = other.ID })
	_, err = db.RecordTransferPart(ctx, elsewhere.ID, 0, 700)
	must(t, err)
	if id := newest(dest.ID); id != 60 {
		t.Fatalf("newest = %d, want 60", id)
	}
	if id := newest(other.ID); id != 700 {
		t.Fatalf("newest in the other channel = %d, want 700", id)
	}

	tests := []struct {
		name    string
		channel int64
		message int64
		want    bool
	}{
		{"package's first part", dest.ID, 50, true},
		{"package's last part", dest.ID, 52, true},
		{"before the package", dest.ID, 49, false},
		{"after the package", dest.ID, 53, false},
		{"same id in another channel", other.ID, 50, false},
		{"posted transfer part", dest.ID, 60, true},
		{"part being posted (after id only)", dest.ID, 61, false},
		{"other channel's package", other.ID, 500, true},
		{"other channel's part", other.ID, 700, true},
		{"other channel's part seen from here", dest.ID, 700, false},
	}
	for _, tt := range tests {
		taken, err := db.IsDestMessageTaken(ctx, tt.channel, tt.message)
		must(t, err)
		if taken != tt.want {
			t.Errorf("%s: IsDestMessageTaken(%d) = %v, want %v", tt.name, tt.message, taken, tt.want)
		}
	}
	// A cleared part frees its message.
	must(t, db.ClearTransferPart(ctx, tr.ID, 0))
	if taken, _ := db.IsDestMessageTaken(ctx, dest.ID, 60); taken {
		t.Fatal("message 60 still taken after ClearTransferPart")
	}
	if id := newest(dest.ID); id != 50 {
		t.Fatalf("newest after clearing = %d, want 50", id)
	}
}

func TestCountUnfinishedJobs(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	scan, topic, ingest, upload, audit := hoard.ScanChannelArgs{}.Kind(), hoard.ScanTopicArgs{}.Kind(),
		hoard.IngestMessageArgs{}.Kind(), hoard.UploadPartArgs{}.Kind(), hoard.AuditArgs{}.Kind()
	run := func(id int64) map[string]any { return map[string]any{"run_id": id, "channel_id": 7} }
	for _, j := range []riverJob{
		{Kind: scan, State: "available", Args: run(1)},
		{Kind: topic, State: "running", Args: run(1), Attempt: 1},
		{Kind: ingest, State: "retryable", Args: run(1), Attempt: 1},
		{Kind: ingest, State: "scheduled", Args: run(1)},
		{Kind: upload, State: "pending", Args: run(1)},
		{Kind: ingest, State: "completed", Args: run(1), Attempt: 1},
		{Kind: ingest, State: "cancelled", Args: run(1), Attempt: 1},
		{Kind: ingest, State: "discarded", Args: run(1), Attempt: 5},
		{Kind: audit, State: "available", Args: run(1)},
		{Kind: scan, State: "available", Args: run(2)},
		{Kind: ingest, State: "available", Args: map[string]any{"channel_id": 7}},
		{Kind: upload, State: "completed", Args: run(2), Attempt: 1},
		// Run 4: a quick retry due soon is waited for; a retry and a
		// snooze left for a later cycle are not.
		{Kind: ingest, State: "retryable", Args: run(4), Attempt: 1, ScheduledAt: time.Now().Add(30 * time.Second)},
		{Kind: ingest, State: "retryable", Args: run(4), Attempt: 2, ScheduledAt: time.Now().Add(time.Hour)},
		{Kind: upload, State: "scheduled", Args: run(4), Attempt: 1, ScheduledAt: time.Now().Add(2 * time.Hour)},
	} {
		mustRiverJob(t, db, j)
	}
	due := time.Now().Add(30 * time.Minute)

	runTests := []struct {
		run   int64
		kinds []string
		want  int
	}{
		{1, []string{scan, topic, ingest, upload}, 5},
		{1, []string{ingest}, 2},
		{1, []string{audit}, 1},
		{2, []string{scan, topic, ingest, upload}, 1},
		{2, []string{upload}, 0},
		{3, []string{scan, topic, ingest, upload, audit}, 0},
		{1, nil, 0},
		{4, []string{scan, topic, ingest, upload}, 1},
	}
	for _, tt := range runTests {
		n, err := db.CountUnfinishedRunJobs(ctx, tt.run, due, tt.kinds...)
		must(t, err)
		if n != tt.want {
			t.Errorf("CountUnfinishedRunJobs(%d, %v) = %d, want %d", tt.run, tt.kinds, n, tt.want)
		}
	}

	tests := []struct {
		kinds []string
		want  int
	}{
		{[]string{ingest}, 5},
		{[]string{scan}, 2},
		{[]string{audit, upload}, 3},
		{[]string{scan, topic, ingest, upload, audit}, 11},
		{[]string{"unknown_kind"}, 0},
		{nil, 0},
	}
	for _, tt := range tests {
		n, err := db.CountUnfinishedJobs(ctx, tt.kinds...)
		must(t, err)
		if n != tt.want {
			t.Errorf("CountUnfinishedJobs(%v) = %d, want %d", tt.kinds, n, tt.want)
		}
	}
}

func TestFailedRunJobErrors(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	scan, topic := hoard.ScanChannelArgs{}.Kind(), hoard.ScanTopicArgs{}.Kind()
	run := func(id int64) map[string]any { return map[string]any{"run_id": id, "map_id": 3} }
	attemptErr := func(msg string) string {
		return fmt.Sprintf(`{"at":"2026-01-01T00:00:00Z","attempt":1,"error":%q}`, msg)
	}
	for _, j := range []riverJob{
		{Kind: scan, State: "discarded", Args: run(1), Attempt: 5, Errors: []string{attemptErr("first try"), attemptErr("scan Minis: timeout")}},
		{Kind: topic, State: "discarded", Args: run(1), Attempt: 5, Errors: []string{attemptErr("scan Dragons: EOF")}},
		{Kind: topic, State: "discarded", Args: run(1), Attempt: 5}, // no error recorded
		{Kind: scan, State: "retryable", Args: run(1), Attempt: 2, Errors: []string{attemptErr("still trying")}},
		{Kind: scan, State: "completed", Args: run(1), Attempt: 1},
		{Kind: scan, State: "discarded", Args: run(2), Attempt: 5, Errors: []string{attemptErr("another run")}},
		{Kind: hoard.IngestMessageArgs{}.Kind(), State: "discarded", Args: run(1), Attempt: 5, Errors: []string{attemptErr("not a scan")}},
	} {
		mustRiverJob(t, db, j)
	}
	got, err := db.FailedRunJobErrors(ctx, 1, scan, topic)
	must(t, err)
	want := []string{"scan Minis: timeout", "scan Dragons: EOF", "no error recorded"}
	if !slices.Equal(got, want) {
		t.Fatalf("FailedRunJobErrors = %q, want %q", got, want)
	}
	if got, err := db.FailedRunJobErrors(ctx, 3, scan, topic); err != nil || len(got) != 0 {
		t.Fatalf("a run without failures: %q, %v", got, err)
	}
}

func TestWaitingJobIDs(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ingest, upload := hoard.IngestMessageArgs{}.Kind(), hoard.UploadPartArgs{}.Kind()
	set := func(msg int64) map[string]any { return map[string]any{"run_id": 1, "channel_id": 7, "message_id": msg} }
	later := time.Now().Add(time.Hour)
	retryable := mustRiverJob(t, db, riverJob{Kind: ingest, State: "retryable", Args: set(42), Attempt: 2, ScheduledAt: later})
	snoozed := mustRiverJob(t, db, riverJob{Kind: ingest, State: "scheduled", Args: set(42), ScheduledAt: later})
	for _, j := range []riverJob{
		{Kind: ingest, State: "running", Args: set(42), Attempt: 3},
		{Kind: ingest, State: "discarded", Args: set(42), Attempt: 5},
		{Kind: ingest, State: "available", Args: set(42)},
		{Kind: ingest, State: "retryable", Args: set(43), Attempt: 2, ScheduledAt: later},
		{Kind: upload, State: "retryable", Args: set(42), Attempt: 2, ScheduledAt: later},
	} {
		mustRiverJob(t, db, j)
	}
	for _, tt := range []struct {
		name  string
		kind  string
		match map[string]any
		want  []int64
	}{
		{"the set's waiting jobs", ingest, map[string]any{"channel_id": 7, "message_id": 42}, []int64{retryable, snoozed}},
		{"another kind", "verify", map[string]any{"channel_id": 7, "message_id": 42}, nil},
		{"no set", ingest, map[string]any{"channel_id": 8, "message_id": 42}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.WaitingJobIDs(ctx, tt.kind, tt.match)
			must(t, err)
			if !slices.Equal(got, tt.want) {
				t.Errorf("WaitingJobIDs(%s, %v) = %v, want %v", tt.kind, tt.match, got, tt.want)
			}
		})
	}
}

// TestSplitTransferPart splits an unposted part into pieces: the first
// keeps its number, the others are numbered after the last part, the
// parts list in byte order; posted parts, pieces that do not cover the
// part and transfers no longer publishing are refused.
func TestSplitTransferPart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	piece := func(name string, off, n int64) hoard.TransferPart {
		return hoard.TransferPart{Name: name, Offset: off, Length: n}
	}
	type result struct {
		Code  string
		Nos   []int
		Parts []string // "no:name@offset+length", in list order
		Total int
	}
	for _, tc := range []struct {
		name   string
		setup  func(db *store.DB, tr *hoard.Transfer)
		partNo int
		pieces []hoard.TransferPart
		want   result
	}{
		{name: "middle part in three", partNo: 1,
			pieces: []hoard.TransferPart{piece("set.zip.002.001", 10, 4), piece("set.zip.002.002", 14, 4), piece("set.zip.002.003", 18, 2)},
			want: result{Nos: []int{3, 4}, Parts: []string{"0:set.zip.001@0+10", "1:set.zip.002.001@10+4", "3:set.zip.002.002@14+4",
				"4:set.zip.002.003@18+2", "2:set.zip.003@20+10"}, Total: 5}},
		{name: "posted part", partNo: 1, setup: func(db *store.DB, tr *hoard.Transfer) {
			must(t, errOnly(db.RecordTransferPart(ctx, tr.ID, 1, 77)))
		}, pieces: []hoard.TransferPart{piece("a", 10, 5), piece("b", 15, 5)}, want: result{Code: hoard.ECONFLICT, Total: 3}},
		{name: "not publishing", partNo: 1, setup: func(db *store.DB, tr *hoard.Transfer) {
			must(t, db.SetTransferStatus(ctx, tr.ID, hoard.TransferFailed, "x"))
		}, pieces: []hoard.TransferPart{piece("a", 10, 5), piece("b", 15, 5)}, want: result{Code: hoard.ECONFLICT, Total: 3}},
		{name: "a gap", partNo: 1, pieces: []hoard.TransferPart{piece("a", 10, 4), piece("b", 15, 5)}, want: result{Code: hoard.EINVALID, Total: 3}},
		{name: "short", partNo: 1, pieces: []hoard.TransferPart{piece("a", 10, 4), piece("b", 14, 5)}, want: result{Code: hoard.EINVALID, Total: 3}},
		{name: "one piece", partNo: 1, pieces: []hoard.TransferPart{piece("a", 10, 10)}, want: result{Code: hoard.EINVALID, Total: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := storetest.NewTx(t)
			tr := mustTransfer(t, db)
			if tc.setup != nil {
				tc.setup(db, tr)
			}
			var got result
			err := db.InTx(ctx, func(tx *store.DB) error {
				var err error
				got.Nos, err = tx.SplitTransferPart(ctx, tr.ID, tc.partNo, tc.pieces)
				return err
			})
			got.Code = hoard.ErrorCode(err)
			parts, err := db.ListTransferParts(ctx, tr.ID)
			must(t, err)
			if tc.want.Code == "" {
				for _, p := range parts {
					got.Parts = append(got.Parts, fmt.Sprintf("%d:%s@%d+%d", p.PartNo, p.Name, p.Offset, p.Length))
				}
			}
			again, err := db.FindTransfer(ctx, tr.ID)
			must(t, err)
			got.Total = again.PartsTotal
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestSaveUploadPoint keeps a part's upload point, replaces it, forgets it
// (file id 0), and a split of the part forgets it too.
func TestSaveUploadPoint(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	tr := mustTransfer(t, db)
	type point struct {
		File  int64
		Done  int
		Saved bool
	}
	read := func(no int) point {
		t.Helper()
		p, err := db.FindTransferPart(ctx, tr.ID, no)
		must(t, err)
		return point{p.UploadFileID, p.UploadPartsDone, p.UploadSavedAt != nil}
	}
	var got []point
	must(t, db.SaveUploadPoint(ctx, tr.ID, 1, 77, 5))
	got = append(got, read(1), read(0))
	must(t, db.SaveUploadPoint(ctx, tr.ID, 1, 77, 9))
	got = append(got, read(1))
	must(t, db.SaveUploadPoint(ctx, tr.ID, 1, 0, 0))
	got = append(got, read(1))
	must(t, db.SaveUploadPoint(ctx, tr.ID, 1, 78, 3))
	must(t, db.InTx(ctx, func(tx *store.DB) error {
		_, err := tx.SplitTransferPart(ctx, tr.ID, 1, []hoard.TransferPart{{Name: "a", Offset: 10, Length: 5}, {Name: "b", Offset: 15, Length: 5}})
		return err
	}))
	got = append(got, read(1))
	want := []point{{77, 5, true}, {0, 0, false}, {77, 9, true}, {0, 0, false}, {0, 0, false}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	wantCode(t, db.SaveUploadPoint(ctx, tr.ID, 42, 1, 1), hoard.ENOTFOUND)
}
