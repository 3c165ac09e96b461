package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func mustSkipped(t *testing.T, db *store.DB, channelID, messageID int64, mutate ...func(*hoard.SkippedPackage)) *hoard.SkippedPackage {
	t.Helper()
	s := &hoard.SkippedPackage{SourceChannelID: channelID, SourceMessageID: messageID, Reason: hoard.SkipDownloadFailed,
		FileName: "a.zip", FileSize: 10, AttemptCount: 1}
	for _, m := range mutate {
		m(s)
	}
	if err := db.UpsertSkippedPackage(context.Background(), s); err != nil {
		t.Fatalf("UpsertSkippedPackage: %v", err)
	}
	return s
}

func TestUpsertSkippedPackage(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	acc := mustAccount(t, db)
	ch := mustChannel(t, db)
	m := mustMap(t, db, acc.ID, ch.ID)

	s := &hoard.SkippedPackage{SourceChannelID: ch.ID, SourceMessageID: 42, Reason: hoard.SkipDownloadFailed,
		FileName: "Set.part1.rar", FileSize: 999, AttemptCount: 1, LastError: "timeout", RiverJobID: 1001,
		SourceTopicID: 3, AccountChannelMapID: m.ID}
	must(t, db.UpsertSkippedPackage(ctx, s))
	if s.ID == 0 {
		t.Fatalf("inserted record has no id: %+v", s)
	}
	want := skippedRow{ID: s.ID, Status: hoard.SkipRetrying, Reason: s.Reason, PartCount: 1, MaxAttempts: 5, AttemptCount: 1, RiverJobID: 1001,
		SourceTopicID: 3, AccountChannelMapID: m.ID, FileName: "Set.part1.rar", FileSize: 999, LastError: "timeout", HasCreatedAt: true}
	if diff := cmp.Diff(want, skippedRowOf(s)); diff != "" {
		t.Fatalf("inserted record (-want +got):\n%s", diff)
	}
	first := *s

	// Same channel and message: the record is updated; job id 0 keeps the
	// known job.
	second := &hoard.SkippedPackage{SourceChannelID: ch.ID, SourceMessageID: 42, Reason: hoard.SkipHashMismatch,
		Status: hoard.SkipGaveUp, FileName: "Set.part1.rar", FileSize: 999, PartCount: 3, AttemptCount: 5, MaxAttempts: 5,
		LastError: "hash differs"}
	must(t, db.UpsertSkippedPackage(ctx, second))
	if !second.CreatedAt.Equal(first.CreatedAt) {
		t.Fatalf("updated record created at %s, want %s", second.CreatedAt, first.CreatedAt)
	}
	want = skippedRow{ID: first.ID, Reason: hoard.SkipHashMismatch, Status: hoard.SkipGaveUp, AttemptCount: 5, LastError: "hash differs",
		RiverJobID: 1001, PartCount: 3, HasCreatedAt: true}
	if diff := cmp.Diff(want, skippedRowOf(second),
		cmpopts.IgnoreFields(skippedRow{}, "MaxAttempts", "SourceTopicID", "AccountChannelMapID", "FileName", "FileSize")); diff != "" {
		t.Fatalf("updated record (-want +got):\n%s", diff)
	}
	found, err := db.FindSkippedPackage(ctx, first.ID)
	must(t, err)
	if found.AttemptCount != 5 || found.RiverJobID != 1001 || found.Status != hoard.SkipGaveUp {
		t.Fatalf("FindSkippedPackage = %+v", found)
	}
	// A new job id replaces the old one.
	third := &hoard.SkippedPackage{SourceChannelID: ch.ID, SourceMessageID: 42, Reason: hoard.SkipOther, AttemptCount: 2, RiverJobID: 2002}
	must(t, db.UpsertSkippedPackage(ctx, third))
	if third.ID != first.ID || third.RiverJobID != 2002 || third.Status != hoard.SkipRetrying {
		t.Fatalf("third upsert = %+v", third)
	}

	// Another message is another record.
	other := mustSkipped(t, db, ch.ID, 43)
	if other.ID == first.ID {
		t.Fatal("second message shares the record")
	}

	for name, bad := range map[string]*hoard.SkippedPackage{
		"invalid reason":        {SourceChannelID: ch.ID, SourceMessageID: 50, Reason: "BORED"},
		"missing reason":        {SourceChannelID: ch.ID, SourceMessageID: 51},
		"invalid status":        {SourceChannelID: ch.ID, SourceMessageID: 52, Reason: hoard.SkipOther, Status: "PAUSED"},
		"negative attempts":     {SourceChannelID: ch.ID, SourceMessageID: 53, Reason: hoard.SkipOther, AttemptCount: -1},
		"unknown channel":       {SourceChannelID: -1, SourceMessageID: 54, Reason: hoard.SkipOther},
		"unknown map":           {SourceChannelID: ch.ID, SourceMessageID: 55, Reason: hoard.SkipOther, AccountChannelMapID: -1},
		"invalid on update":     {SourceChannelID: ch.ID, SourceMessageID: 42, Reason: "BORED"},
		"negative max attempts": {SourceChannelID: ch.ID, SourceMessageID: 56, Reason: hoard.SkipOther, MaxAttempts: -2},
	} {
		err := savepoint(db, func(tx *store.DB) error { return tx.UpsertSkippedPackage(ctx, bad) })
		if hoard.ErrorCode(err) != hoard.EINVALID {
			t.Errorf("%s: err = %v, want invalid", name, err)
		}
	}
	got, _ := db.FindSkippedPackage(ctx, first.ID)
	if got.Reason != hoard.SkipOther {
		t.Fatalf("rejected update was stored: %+v", got)
	}
}

func TestFindAndListSkippedPackages(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch, other := mustChannel(t, db), mustChannel(t, db)
	var all []*hoard.SkippedPackage
	for i := int64(1); i <= 5; i++ {
		all = append(all, mustSkipped(t, db, ch.ID, i, func(s *hoard.SkippedPackage) {
			if i%2 == 0 {
				s.Reason = hoard.SkipSizeLimit
			}
		}))
	}
	all = append(all, mustSkipped(t, db, other.ID, 1))

	bySource, err := db.FindSkippedBySource(ctx, ch.ID, 3)
	must(t, err)
	if bySource.ID != all[2].ID || bySource.SourceMessageID != 3 {
		t.Fatalf("FindSkippedBySource = %+v", bySource)
	}
	_, err = db.FindSkippedBySource(ctx, ch.ID, 99)
	wantCode(t, err, hoard.ENOTFOUND)
	_, err = db.FindSkippedBySource(ctx, -1, 3)
	wantCode(t, err, hoard.ENOTFOUND)
	_, err = db.FindSkippedPackage(ctx, -1)
	wantCode(t, err, hoard.ENOTFOUND)

	idsOf := func(list []hoard.SkippedPackage) []int64 {
		var out []int64
		for _, s := range list {
			out = append(out, s.ID)
		}
		return out
	}
	tests := []struct {
		name     string
		reason   hoard.SkipReason
		beforeID int64
		limit    int
		want     []int64
	}{
		{"all, newest first", "", 0, 50, []int64{all[5].ID, all[4].ID, all[3].ID, all[2].ID, all[1].ID, all[0].ID}},
		{"reason filter", hoard.SkipSizeLimit, 0, 50, []int64{all[3].ID, all[1].ID}},
		{"first page", "", 0, 2, []int64{all[5].ID, all[4].ID}},
		{"next page", "", all[4].ID, 2, []int64{all[3].ID, all[2].ID}},
		{"last page", "", all[2].ID, 2, []int64{all[1].ID, all[0].ID}},
		{"past the end", "", all[0].ID, 2, nil},
		{"reason and page", hoard.SkipDownloadFailed, all[4].ID, 50, []int64{all[2].ID, all[0].ID}},
		{"reason without records", hoard.SkipAccessLost, 0, 50, nil},
		{"default limit", "", 0, 0, []int64{all[5].ID, all[4].ID, all[3].ID, all[2].ID, all[1].ID, all[0].ID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.ListSkippedPackages(ctx, tt.reason, tt.beforeID, tt.limit)
			must(t, err)
			if ids := idsOf(got); !slices.Equal(ids, tt.want) {
				t.Fatalf("ids = %v, want %v", ids, tt.want)
			}
		})
	}
}

func TestCountPendingSkipped(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch, other := mustChannel(t, db), mustChannel(t, db)
	n, err := db.CountPendingSkipped(ctx, ch.ID)
	must(t, err)
	if n != 0 {
		t.Fatalf("empty channel: %d pending", n)
	}
	mustSkipped(t, db, ch.ID, 1)
	mustSkipped(t, db, ch.ID, 2)
	gaveUp := mustSkipped(t, db, ch.ID, 3, func(s *hoard.SkippedPackage) { s.Status = hoard.SkipGaveUp })
	mustSkipped(t, db, other.ID, 1)
	n, err = db.CountPendingSkipped(ctx, ch.ID)
	must(t, err)
	if n != 2 {
		t.Fatalf("pending = %d, want 2 (RETRYING of this channel only)", n)
	}
	must(t, db.RestartSkippedPackage(ctx, gaveUp.ID, 0))
	n, _ = db.CountPendingSkipped(ctx, ch.ID)
	if n != 3 {
		t.Fatalf("pending after restart = %d, want 3", n)
	}
}

func TestDeleteAndRestartSkippedPackage(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch := mustChannel(t, db)
	a := mustSkipped(t, db, ch.ID, 1)
	b := mustSkipped(t, db, ch.ID, 2)
	c := mustSkipped(t, db, ch.ID, 3, func(s *hoard.SkippedPackage) {
		s.Status = hoard.SkipGaveUp
		s.AttemptCount = 5
		s.RiverJobID = 77
		s.LastError = "gave up"
	})

	must(t, db.DeleteSkippedBySource(ctx, ch.ID, 1))
	_, err := db.FindSkippedPackage(ctx, a.ID)
	wantCode(t, err, hoard.ENOTFOUND)
	must(t, db.DeleteSkippedBySource(ctx, ch.ID, 1))  // already gone: fine
	must(t, db.DeleteSkippedBySource(ctx, -1, 2))     // unknown channel: fine
	must(t, db.DeleteSkippedBySource(ctx, ch.ID, 99)) // unknown message: fine
	_, err = db.FindSkippedPackage(ctx, b.ID)
	must(t, err)

	must(t, db.DeleteSkippedPackage(ctx, b.ID))
	_, err = db.FindSkippedPackage(ctx, b.ID)
	wantCode(t, err, hoard.ENOTFOUND)
	wantCode(t, db.DeleteSkippedPackage(ctx, b.ID), hoard.ENOTFOUND)

	must(t, db.RestartSkippedPackage(ctx, c.ID, 88))
	got, err := db.FindSkippedPackage(ctx, c.ID)
	must(t, err)
	if diff := cmp.Diff(skippedRow{Status: hoard.SkipRetrying, RiverJobID: 88, Reason: c.Reason, LastError: "gave up", MaxAttempts: c.MaxAttempts},
		skippedRowOf(got), cmpopts.IgnoreFields(skippedRow{}, "ID", "FileName", "FileSize", "PartCount", "SourceTopicID", "AccountChannelMapID", "HasCreatedAt")); diff != "" {
		t.Fatalf("restarted record (-want +got):\n%s", diff)
	}
	must(t, db.RestartSkippedPackage(ctx, c.ID, 0))
	got, _ = db.FindSkippedPackage(ctx, c.ID)
	if got.RiverJobID != 0 {
		t.Fatalf("restart without a job kept job %d", got.RiverJobID)
	}
	wantCode(t, db.RestartSkippedPackage(ctx, -1, 1), hoard.ENOTFOUND)
}

// skippedRow is what the skipped-package tests check of a record.
type skippedRow struct {
	ID                                             int64
	Status                                         hoard.SkipStatus
	Reason                                         hoard.SkipReason
	PartCount, MaxAttempts, AttemptCount           int
	RiverJobID, SourceTopicID, AccountChannelMapID int64
	FileName                                       string
	FileSize                                       int64
	LastError                                      string
	HasCreatedAt                                   bool
}

func skippedRowOf(s *hoard.SkippedPackage) skippedRow {
	return skippedRow{s.ID, s.Status, s.Reason, s.PartCount, s.MaxAttempts, s.AttemptCount, s.RiverJobID, s.SourceTopicID,
		s.AccountChannelMapID, s.FileName, s.FileSize, s.LastError, !s.CreatedAt.IsZero()}
}
