package jobs

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
)

// TestIngestMessageReadsTopicAndChannelLive: a set queued before its topic
// was disabled (disableActiveTopic) or its channel deactivated is not
// downloaded; the watermark goes back before it, so enabling again picks it
// up (SPEC rule 17). No messenger call is made: the account is nil.
func TestIngestMessageReadsTopicAndChannelLive(t *testing.T) {
	for _, tt := range []struct {
		name          string
		disableTopic  bool
		deactivate    bool
		wantWatermark int64
	}{
		{name: "topic disabled", disableTopic: true, wantWatermark: 41},
		{name: "channel deactivated", deactivate: true, wantWatermark: 41},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := storetest.NewTx(t)
			ctx := context.Background()
			acc, err := db.CreateAccount(ctx, "+15550001111")
			if err != nil {
				t.Fatal(err)
			}
			ch := &hoard.Channel{PlatformID: 9001, Title: "Forum", Kind: hoard.ChannelSource, IsActive: true, IsForum: true}
			if err := db.UpsertChannel(ctx, ch); err != nil {
				t.Fatal(err)
			}
			m, err := db.UpsertChannelMap(ctx, acc.ID, ch.ID, 1, hoard.MapReader)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.UpsertTopic(ctx, m.ID, 7, "Dragons", false); err != nil {
				t.Fatal(err)
			}
			if err := db.AdvanceTopicWatermark(ctx, m.ID, 7, 50); err != nil { // the scan passed the set
				t.Fatal(err)
			}
			if tt.disableTopic {
				if err := db.SetTopicFetchEnabled(ctx, m.ID, 7, false); err != nil {
					t.Fatal(err)
				}
			}
			if tt.deactivate {
				off := false
				if _, _, err := db.UpdateChannelSettings(ctx, ch.ID, store.ChannelSettings{IsActive: &off}); err != nil {
					t.Fatal(err)
				}
			}
			w := newIngestMessageWorker(newParts(Deps{DB: db, Logger: discardLogger(), Accounts: oneAccount{}, SpoolDir: t.TempDir()}))
			tw := rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, river.Worker[hoard.IngestMessageArgs](w))
			args := hoard.IngestMessageArgs{ChannelID: ch.ID, MessageID: 42, MapID: m.ID, TopicID: 7, FileName: "Wings.zip", Size: 10,
				Parts: []hoard.SourcePart{{MessageID: 42, Name: "Wings.zip", Size: 10}}}
			res, err := tw.Work(ctx, t, db.Tx(), args, nil)
			if err != nil || res.Job.State != rivertype.JobStateCompleted {
				t.Fatalf("work = %v, state %v", err, res.Job.State)
			}
			topic, err := db.FindTopic(ctx, m.ID, 7)
			if err != nil {
				t.Fatal(err)
			}
			if topic.LastProcessedMessageID != tt.wantWatermark {
				t.Errorf("topic watermark = %d, want %d (just before the set)", topic.LastProcessedMessageID, tt.wantWatermark)
			}
			if _, err := db.FindTransferBySource(ctx, ch.ID, 42); hoard.ErrorCode(err) != hoard.ENOTFOUND {
				t.Errorf("a transfer was created: %v", err)
			}
		})
	}
}

// TestIngestMessageOfADeletedSourceIsSkipped: a set whose message was
// deleted after the scan queued it ends as a SKIPPED row the user can see,
// not as a silently cancelled job.
func TestIngestMessageOfADeletedSourceIsSkipped(t *testing.T) {
	env := messengertest.Start(t, "")
	acc := env.Account(t, env.Config("account"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ref, err := messenger.ParseChannelRef("@mammothfactory")
	if err != nil {
		t.Fatal(err)
	}
	peer, err := acc.ResolveChannel(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.NewTx(t)
	a, err := db.CreateAccount(ctx, "+15550000001")
	if err != nil {
		t.Fatal(err)
	}
	ch := &hoard.Channel{PlatformID: peer.ID, Title: peer.Title, Kind: hoard.ChannelSource, IsActive: true}
	if err := db.UpsertChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	m, err := db.UpsertChannelMap(ctx, a.ID, ch.ID, peer.AccessHash, hoard.MapReader)
	if err != nil {
		t.Fatal(err)
	}
	w := newIngestMessageWorker(newParts(Deps{DB: db, Logger: discardLogger(), Accounts: oneAccount{acc}, SpoolDir: t.TempDir()}))
	tw := rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, river.Worker[hoard.IngestMessageArgs](w))
	args := hoard.IngestMessageArgs{ChannelID: ch.ID, MessageID: 9999, MapID: m.ID, FileName: "Gone.zip", Size: 10,
		Parts: []hoard.SourcePart{{MessageID: 9999, Name: "Gone.zip", Size: 10}}}
	res, err := tw.Work(ctx, t, db.Tx(), args, &river.InsertOpts{MaxAttempts: 5})
	if err != nil || res.Job.State != rivertype.JobStateCancelled {
		t.Fatalf("work = %v, state %v; want a cancelled job", err, res.Job.State)
	}
	s, err := db.FindSkippedBySource(ctx, ch.ID, 9999)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != hoard.SkipGaveUp || s.Reason != hoard.SkipOther || s.AttemptCount != 1 || !strings.Contains(s.LastError, "deleted") {
		t.Fatalf("skipped record = %+v", s)
	}
}
