package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

// TestPartialScanFound follows a map's and a topic's flag through a scan
// interrupted after a page that queued archives, the scan that finishes
// it, and a reset of the channel.
func TestPartialScanFound(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	m := mustMap(t, db, mustAccount(t, db).ID, mustChannel(t, db).ID)
	_, err := db.UpsertTopic(ctx, m.ID, 7, "Dragons", false)
	must(t, err)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	steps := []struct {
		name string
		do   func(tx *store.DB) error
		want hoard.ScanState
	}{
		{"a finished empty scan", func(tx *store.DB) error {
			if err := tx.SetMapScanState(ctx, m.ID, hoard.ScanState{LastScannedAt: at, ConsecutiveEmptyScans: 2}); err != nil {
				return err
			}
			return tx.SetTopicScanState(ctx, m.ID, 7, hoard.ScanState{LastScannedAt: at, ConsecutiveEmptyScans: 2})
		}, hoard.ScanState{LastScannedAt: at, ConsecutiveEmptyScans: 2}},
		// A page's commit leaves the rest of the state alone.
		{"a page of an unfinished scan queued archives", func(tx *store.DB) error {
			if err := tx.MarkMapPartialScanFound(ctx, m.ID); err != nil {
				return err
			}
			return tx.MarkTopicPartialScanFound(ctx, m.ID, 7)
		}, hoard.ScanState{LastScannedAt: at, ConsecutiveEmptyScans: 2, PartialScanFound: true}},
		{"the scan finishes", func(tx *store.DB) error {
			s := hoard.ScanState{LastScannedAt: at.Add(time.Hour), LastScanFoundArchives: true}
			if err := tx.SetMapScanState(ctx, m.ID, s); err != nil {
				return err
			}
			return tx.SetTopicScanState(ctx, m.ID, 7, s)
		}, hoard.ScanState{LastScannedAt: at.Add(time.Hour), LastScanFoundArchives: true}},
		{"marked again, then the channel is reset", func(tx *store.DB) error {
			if err := tx.MarkMapPartialScanFound(ctx, m.ID); err != nil {
				return err
			}
			if err := tx.MarkTopicPartialScanFound(ctx, m.ID, 7); err != nil {
				return err
			}
			return tx.ResetChannelProgress(ctx, m.ChannelID)
		}, hoard.ScanState{LastScannedAt: epoch, LastScanFoundArchives: true}},
	}
	for _, s := range steps {
		must(t, s.do(db))
		gotMap, err := db.FindChannelMap(ctx, m.ID)
		must(t, err)
		gotTopic, err := db.FindTopic(ctx, m.ID, 7)
		must(t, err)
		for what, got := range map[string]hoard.ScanState{"map": gotMap.ScanState, "topic": gotTopic.ScanState} {
			got.LastScannedAt = got.LastScannedAt.UTC()
			if got != s.want {
				t.Errorf("%s: %s state = %+v, want %+v", s.name, what, got, s.want)
			}
		}
	}
	wantCode(t, db.MarkMapPartialScanFound(ctx, -1), hoard.ENOTFOUND)
	wantCode(t, db.MarkTopicPartialScanFound(ctx, m.ID, -1), hoard.ENOTFOUND)
}
