package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

var epoch = time.Unix(0, 0).UTC()

func TestUpsertChannelMap(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	acc := mustAccount(t, db)
	ch := mustChannel(t, db)

	m, err := db.UpsertChannelMap(ctx, acc.ID, ch.ID, 111, hoard.MapReader)
	must(t, err)
	type channelMap struct {
		HasID, HasCreatedAt, FoundArchives              bool
		AccountID, ChannelID, AccessHash, LastProcessed int64
		Role                                            hoard.MapRole
		LastScannedAt                                   time.Time
		EmptyScans                                      int
	}
	if diff := cmp.Diff(channelMap{true, true, true, acc.ID, ch.ID, 111, 0, hoard.MapReader, epoch, 0}, channelMap{m.ID != 0, !m.CreatedAt.IsZero(),
		m.LastScanFoundArchives, m.AccountID, m.ChannelID, m.AccessHash, m.LastProcessedMessageID, m.Role, m.LastScannedAt,
		m.ConsecutiveEmptyScans}); diff != "" {
		t.Fatalf("new map (-want +got):\n%s", diff)
	}
	must(t, db.AdvanceWatermark(ctx, m.ID, 500))

	again, err := db.UpsertChannelMap(ctx, acc.ID, ch.ID, 222, hoard.MapWriter)
	must(t, err)
	if again.ID != m.ID || again.AccessHash != 222 || again.Role != hoard.MapWriter || again.LastProcessedMessageID != 500 {
		t.Fatalf("re-upserted map = %+v", again)
	}
	found, err := db.FindChannelMap(ctx, m.ID)
	must(t, err)
	if found.AccessHash != 222 || found.Role != hoard.MapWriter || found.LastProcessedMessageID != 500 {
		t.Fatalf("FindChannelMap = %+v", found)
	}
	_, err = db.FindChannelMap(ctx, -1)
	wantCode(t, err, hoard.ENOTFOUND)

	for name, call := range map[string]func(tx *store.DB) error{
		"invalid role": func(tx *store.DB) error { _, err := tx.UpsertChannelMap(ctx, acc.ID, ch.ID, 1, "OWNER"); return err },
		"unknown account": func(tx *store.DB) error {
			_, err := tx.UpsertChannelMap(ctx, -1, ch.ID, 1, hoard.MapReader)
			return err
		},
		"unknown channel": func(tx *store.DB) error {
			_, err := tx.UpsertChannelMap(ctx, acc.ID, -1, 1, hoard.MapReader)
			return err
		},
	} {
		if err := savepoint(db, call); hoard.ErrorCode(err) != hoard.EINVALID {
			t.Errorf("%s: err = %v, want invalid", name, err)
		}
	}
}

func TestListChannelMaps(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	a, b := mustAccount(t, db), mustAccount(t, db)
	ch, other := mustChannel(t, db), mustChannel(t, db)
	m2 := mustMap(t, db, b.ID, ch.ID)
	m1 := mustMap(t, db, a.ID, ch.ID)
	mustMap(t, db, a.ID, other.ID)

	got, err := db.ListChannelMaps(ctx, ch.ID)
	must(t, err)
	if len(got) != 2 || got[0].ID != m2.ID || got[1].ID != m1.ID {
		t.Fatalf("ListChannelMaps = %+v, want maps %d, %d", got, m2.ID, m1.ID)
	}
	none, err := db.ListChannelMaps(ctx, -1)
	must(t, err)
	if len(none) != 0 {
		t.Fatalf("unknown channel has %d maps", len(none))
	}
}

func TestListScanMaps(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	signedIn := func() *hoard.Account {
		a := mustAccount(t, db)
		must(t, db.SetAccountAuthState(ctx, a.ID, hoard.AuthAuthenticated, ""))
		return a
	}
	older, newer := signedIn(), signedIn()
	pending := mustAccount(t, db)
	disabled := signedIn()
	must(t, db.SetAccountActive(ctx, disabled.ID, false))
	expired := signedIn()
	must(t, db.SetAccountAuthState(ctx, expired.ID, hoard.AuthExpired, ""))

	shared := mustChannel(t, db, activeSource)
	// The newer account's map is created first: the oldest account still wins.
	mustMap(t, db, newer.ID, shared.ID)
	wantShared := mustMap(t, db, older.ID, shared.ID)

	onlyNewer := mustChannel(t, db, activeSource)
	mustMap(t, db, pending.ID, onlyNewer.ID)  // not signed in
	mustMap(t, db, disabled.ID, onlyNewer.ID) // inactive account
	wantNewer := mustMap(t, db, newer.ID, onlyNewer.ID)

	noReader := mustChannel(t, db, activeSource)
	mustMap(t, db, expired.ID, noReader.ID)
	_, err := db.UpsertChannelMap(ctx, older.ID, noReader.ID, 1, hoard.MapWriter)
	must(t, err)

	inactive := mustChannel(t, db) // source, not active
	mustMap(t, db, older.ID, inactive.ID)
	dest := mustChannel(t, db, func(c *hoard.Channel) { c.Kind = hoard.ChannelDestination })
	mustMap(t, db, older.ID, dest.ID)

	got, err := db.ListScanMaps(ctx)
	must(t, err)
	var ids []int64
	for _, m := range got {
		ids = append(ids, m.ID)
	}
	if want := []int64{wantShared.ID, wantNewer.ID}; !slices.Equal(ids, want) {
		t.Fatalf("ListScanMaps = %v, want %v", ids, want)
	}
	if got[0].AccountID != older.ID || got[0].ChannelID != shared.ID || got[0].AccessHash != wantShared.AccessHash {
		t.Fatalf("scan map = %+v", got[0])
	}

	// Deactivating the channel removes it from the cycle.
	_, _, err = db.UpdateChannelSettings(ctx, shared.ID, store.ChannelSettings{IsActive: ptr(false)})
	must(t, err)
	got, err = db.ListScanMaps(ctx)
	must(t, err)
	if len(got) != 1 || got[0].ID != wantNewer.ID {
		t.Fatalf("after deactivation: %+v", got)
	}
}

func TestWatermarks(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	a, b := mustAccount(t, db), mustAccount(t, db)
	ch, other := mustChannel(t, db), mustChannel(t, db)
	m1, m2 := mustMap(t, db, a.ID, ch.ID), mustMap(t, db, b.ID, ch.ID)
	o := mustMap(t, db, a.ID, other.ID)

	watermark := func(id int64) int64 {
		t.Helper()
		m, err := db.FindChannelMap(ctx, id)
		must(t, err)
		return m.LastProcessedMessageID
	}
	topicMark := func(mapID, topicID int64) int64 {
		t.Helper()
		tp, err := db.FindTopic(ctx, mapID, topicID)
		must(t, err)
		return tp.LastProcessedMessageID
	}

	// AdvanceWatermark never moves back.
	for _, step := range []struct{ to, want int64 }{{10, 10}, {5, 10}, {10, 10}, {100, 100}} {
		must(t, db.AdvanceWatermark(ctx, m1.ID, step.to))
		if got := watermark(m1.ID); got != step.want {
			t.Fatalf("AdvanceWatermark(%d) → %d, want %d", step.to, got, step.want)
		}
	}
	wantCode(t, db.AdvanceWatermark(ctx, -1, 1), hoard.ENOTFOUND)
	must(t, db.AdvanceWatermark(ctx, m2.ID, 30))
	must(t, db.AdvanceWatermark(ctx, o.ID, 100))

	// AdvanceTopicWatermark likewise.
	for _, tp := range []struct{ mapID, topicID int64 }{{m1.ID, 1}, {m1.ID, 2}, {m2.ID, 1}, {o.ID, 1}} {
		_, err := db.UpsertTopic(ctx, tp.mapID, tp.topicID, "t", false)
		must(t, err)
	}
	for _, step := range []struct{ to, want int64 }{{80, 80}, {20, 80}, {90, 90}} {
		must(t, db.AdvanceTopicWatermark(ctx, m1.ID, 1, step.to))
		if got := topicMark(m1.ID, 1); got != step.want {
			t.Fatalf("AdvanceTopicWatermark(%d) → %d, want %d", step.to, got, step.want)
		}
	}
	must(t, db.AdvanceTopicWatermark(ctx, m1.ID, 2, 10))
	must(t, db.AdvanceTopicWatermark(ctx, m2.ID, 1, 60))
	must(t, db.AdvanceTopicWatermark(ctx, o.ID, 1, 90))
	wantCode(t, db.AdvanceTopicWatermark(ctx, m1.ID, 99, 1), hoard.ENOTFOUND)

	// RewindWatermarks: every map and topic of the channel down to just
	// below the message; lower ones and other channels stay.
	must(t, db.RewindWatermarks(ctx, ch.ID, 50))
	checks := []struct {
		name      string
		got, want int64
	}{
		{"map 1", watermark(m1.ID), 49},
		{"map 2 (below)", watermark(m2.ID), 30},
		{"other channel's map", watermark(o.ID), 100},
		{"topic 1 of map 1", topicMark(m1.ID, 1), 49},
		{"topic 2 of map 1 (below)", topicMark(m1.ID, 2), 10},
		{"topic 1 of map 2", topicMark(m2.ID, 1), 49},
		{"other channel's topic", topicMark(o.ID, 1), 90},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("after rewind to 50: %s = %d, want %d", c.name, c.got, c.want)
		}
	}
	// Never forward.
	must(t, db.RewindWatermarks(ctx, ch.ID, 1000))
	if got := watermark(m1.ID); got != 49 {
		t.Fatalf("rewind to a later message moved the watermark to %d", got)
	}
	// Message 1 (and 0) rewinds to the start, never below.
	must(t, db.RewindWatermarks(ctx, ch.ID, 1))
	if got, gotT := watermark(m1.ID), topicMark(m1.ID, 1); got != 0 || gotT != 0 {
		t.Fatalf("rewind to message 1: map %d, topic %d", got, gotT)
	}
	must(t, db.RewindWatermarks(ctx, ch.ID, 0))
	if got := watermark(m1.ID); got != 0 {
		t.Fatalf("rewind to message 0: %d", got)
	}
	must(t, db.RewindWatermarks(ctx, -1, 5)) // unknown channel: nothing to do
}

func TestScanStateAndReset(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	acc := mustAccount(t, db)
	ch, other := mustChannel(t, db), mustChannel(t, db)
	m, o := mustMap(t, db, acc.ID, ch.ID), mustMap(t, db, acc.ID, other.ID)
	_, err := db.UpsertTopic(ctx, m.ID, 7, "Topic", false)
	must(t, err)
	_, err = db.UpsertTopic(ctx, o.ID, 7, "Topic", false)
	must(t, err)
	must(t, db.SetTopicFetchEnabled(ctx, m.ID, 7, false))

	scanned := time.Date(2025, 3, 4, 5, 6, 7, 123456000, time.UTC)
	s := hoard.ScanState{LastScannedAt: scanned, LastScanFoundArchives: false, ConsecutiveEmptyScans: 4}
	for _, id := range []int64{m.ID, o.ID} {
		must(t, db.SetMapScanState(ctx, id, s))
		must(t, db.AdvanceWatermark(ctx, id, 300))
		must(t, db.SetTopicScanState(ctx, id, 7, s))
		must(t, db.AdvanceTopicWatermark(ctx, id, 7, 200))
	}
	got, err := db.FindChannelMap(ctx, m.ID)
	must(t, err)
	if !got.LastScannedAt.Equal(scanned) || got.LastScanFoundArchives || got.ConsecutiveEmptyScans != 4 {
		t.Fatalf("map scan state = %+v", got.ScanState)
	}
	tp, err := db.FindTopic(ctx, m.ID, 7)
	must(t, err)
	if !tp.LastScannedAt.Equal(scanned) || tp.LastScanFoundArchives || tp.ConsecutiveEmptyScans != 4 {
		t.Fatalf("topic scan state = %+v", tp.ScanState)
	}
	wantCode(t, db.SetMapScanState(ctx, -1, s), hoard.ENOTFOUND)
	wantCode(t, db.SetTopicScanState(ctx, m.ID, 99, s), hoard.ENOTFOUND)

	must(t, db.ResetChannelProgress(ctx, ch.ID))
	got, _ = db.FindChannelMap(ctx, m.ID)
	if got.LastProcessedMessageID != 0 || !got.LastScannedAt.Equal(epoch) || !got.LastScanFoundArchives || got.ConsecutiveEmptyScans != 0 {
		t.Fatalf("map after reset = %+v", got)
	}
	tp, _ = db.FindTopic(ctx, m.ID, 7)
	if tp.LastProcessedMessageID != 0 || !tp.LastScannedAt.Equal(epoch) || !tp.LastScanFoundArchives || tp.ConsecutiveEmptyScans != 0 {
		t.Fatalf("topic after reset = %+v", tp)
	}
	if tp.FetchEnabled {
		t.Fatal("reset re-enabled a disabled topic")
	}
	// The other channel keeps its progress.
	og, _ := db.FindChannelMap(ctx, o.ID)
	ot, _ := db.FindTopic(ctx, o.ID, 7)
	if og.LastProcessedMessageID != 300 || og.ConsecutiveEmptyScans != 4 || ot.LastProcessedMessageID != 200 || ot.ConsecutiveEmptyScans != 4 {
		t.Fatalf("other channel reset: map %+v, topic %+v", og, ot)
	}
}

func TestTopics(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	acc := mustAccount(t, db)
	m := mustMap(t, db, acc.ID, mustChannel(t, db).ID)
	other := mustMap(t, db, acc.ID, mustChannel(t, db).ID)

	tp, err := db.UpsertTopic(ctx, m.ID, 10, "Dragons", false)
	must(t, err)
	type topic struct {
		HasID                                  bool
		MapID, TopicID, LastProcessedMessage   int64
		Name                                   string
		IsGeneral, FetchEnabled, FoundArchives bool
		LastScannedAt                          time.Time
	}
	if diff := cmp.Diff(topic{true, m.ID, 10, 0, "Dragons", false, true, true, epoch}, topic{tp.ID != 0, tp.AccountChannelMapID, int64(tp.TopicID),
		tp.LastProcessedMessageID, tp.TopicName, tp.IsGeneral, tp.FetchEnabled, tp.LastScanFoundArchives, tp.LastScannedAt}); diff != "" {
		t.Fatalf("new topic (-want +got):\n%s", diff)
	}
	// A rename keeps the fetch flag and the watermark.
	must(t, db.SetTopicFetchEnabled(ctx, m.ID, 10, false))
	must(t, db.AdvanceTopicWatermark(ctx, m.ID, 10, 77))
	renamed, err := db.UpsertTopic(ctx, m.ID, 10, "Dragons & Wyrms", false)
	must(t, err)
	if renamed.ID != tp.ID || renamed.TopicName != "Dragons & Wyrms" || renamed.FetchEnabled || renamed.LastProcessedMessageID != 77 {
		t.Fatalf("renamed topic = %+v", renamed)
	}
	found, err := db.FindTopic(ctx, m.ID, 10)
	must(t, err)
	if found.TopicName != "Dragons & Wyrms" || found.FetchEnabled {
		t.Fatalf("FindTopic = %+v", found)
	}
	_, err = db.FindTopic(ctx, m.ID, 11)
	wantCode(t, err, hoard.ENOTFOUND)
	_, err = db.FindTopic(ctx, other.ID, 10)
	wantCode(t, err, hoard.ENOTFOUND)
	err = savepoint(db, func(tx *store.DB) error { _, err := tx.UpsertTopic(ctx, -1, 1, "x", false); return err })
	wantCode(t, err, hoard.EINVALID)

	// ListTopics: General first, then by name ignoring case, then by id.
	for _, x := range []struct {
		id      int64
		name    string
		general bool
	}{{20, "beta", false}, {21, "Alpha", false}, {1, "General", true}, {23, "alpha", false}} {
		_, err := db.UpsertTopic(ctx, m.ID, x.id, x.name, x.general)
		must(t, err)
	}
	_, err = db.UpsertTopic(ctx, other.ID, 5, "Elsewhere", false)
	must(t, err)
	list, err := db.ListTopics(ctx, m.ID)
	must(t, err)
	var order []int64
	for _, x := range list {
		order = append(order, x.TopicID)
	}
	if want := []int64{1, 21, 23, 20, 10}; !slices.Equal(order, want) {
		t.Fatalf("ListTopics order = %v, want %v", order, want)
	}
	if !list[0].IsGeneral {
		t.Fatal("General topic not flagged")
	}
	empty, err := db.ListTopics(ctx, -1)
	must(t, err)
	if len(empty) != 0 {
		t.Fatalf("unknown map lists %d topics", len(empty))
	}
}

func TestTopicFetchFlag(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	acc := mustAccount(t, db)
	m := mustMap(t, db, acc.ID, mustChannel(t, db).ID)
	enabled := func(topicID int64) bool {
		t.Helper()
		on, err := db.IsTopicFetchEnabled(ctx, m.ID, topicID)
		must(t, err)
		return on
	}

	if !enabled(42) {
		t.Fatal("a topic without a row is not enabled")
	}
	if _, err := db.FindTopic(ctx, m.ID, 42); hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Fatalf("IsTopicFetchEnabled created a row: %v", err)
	}
	// Disabling an unknown topic creates its row (disableActiveTopic).
	must(t, db.SetTopicFetchEnabled(ctx, m.ID, 42, false))
	tp, err := db.FindTopic(ctx, m.ID, 42)
	must(t, err)
	if tp.FetchEnabled || tp.TopicName != "" || tp.LastProcessedMessageID != 0 {
		t.Fatalf("created topic = %+v", tp)
	}
	if enabled(42) {
		t.Fatal("disabled topic reads enabled")
	}
	must(t, db.AdvanceTopicWatermark(ctx, m.ID, 42, 5))
	must(t, db.SetTopicFetchEnabled(ctx, m.ID, 42, true))
	if !enabled(42) {
		t.Fatal("re-enabled topic reads disabled")
	}
	tp, _ = db.FindTopic(ctx, m.ID, 42)
	if tp.ID == 0 || tp.LastProcessedMessageID != 5 {
		t.Fatalf("toggle lost the watermark: %+v", tp)
	}
	must(t, db.SetTopicFetchEnabled(ctx, m.ID, 43, true))
	if !enabled(43) {
		t.Fatal("topic created enabled reads disabled")
	}
	err = savepoint(db, func(tx *store.DB) error { return tx.SetTopicFetchEnabled(ctx, -1, 1, false) })
	wantCode(t, err, hoard.EINVALID)
}
