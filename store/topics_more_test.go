package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
)

func TestChannelTopicsAcrossMaps(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch := mustChannel(t, db, func(c *hoard.Channel) { c.IsForum = true })
	a1, a2 := mustAccount(t, db), mustAccount(t, db)
	m1, err := db.UpsertChannelMap(ctx, a1.ID, ch.ID, 1, hoard.MapReader)
	must(t, err)
	m2, err := db.UpsertChannelMap(ctx, a2.ID, ch.ID, 2, hoard.MapReader)
	must(t, err)
	writer, err := db.UpsertChannelMap(ctx, mustAccount(t, db).ID, ch.ID, 3, hoard.MapWriter)
	must(t, err)
	_, err = db.UpsertTopic(ctx, m1.ID, 1, "General", true)
	must(t, err)
	_, err = db.UpsertTopic(ctx, m1.ID, 7, "Dragons", false)
	must(t, err)
	_, err = db.UpsertTopic(ctx, m2.ID, 7, "Dragons (other view)", false)
	must(t, err)
	_, err = db.UpsertTopic(ctx, writer.ID, 9, "Writer only", false)
	must(t, err)

	topics, err := db.ListChannelTopics(ctx, ch.ID)
	must(t, err)
	if len(topics) != 2 || !topics[0].IsGeneral || topics[1].TopicName != "Dragons" || topics[1].AccountChannelMapID != m1.ID {
		t.Fatalf("topics = %+v", topics)
	}
	n, err := db.SetChannelTopicFetchEnabled(ctx, ch.ID, 7, false)
	must(t, err)
	if n != 2 {
		t.Fatalf("touched %d maps, want the 2 readers", n)
	}
	for _, m := range []int64{m1.ID, m2.ID} {
		if on, _ := db.IsTopicFetchEnabled(ctx, m, 7); on {
			t.Fatalf("topic 7 still enabled on map %d", m)
		}
	}
	// A topic without rows yet is created disabled.
	if n, _ := db.SetChannelTopicFetchEnabled(ctx, ch.ID, 42, false); n != 2 {
		t.Fatalf("new topic rows: %d", n)
	}
	if on, _ := db.IsTopicFetchEnabled(ctx, m2.ID, 42); on {
		t.Fatal("topic 42 enabled")
	}
	if on, _ := db.IsTopicFetchEnabled(ctx, writer.ID, 7); !on {
		t.Fatal("the writer map's topic was touched")
	}
	empty := mustChannel(t, db)
	if n, _ := db.SetChannelTopicFetchEnabled(ctx, empty.ID, 1, false); n != 0 {
		t.Fatalf("channel without maps: %d", n)
	}
}

func TestFindLastFinishedRun(t *testing.T) {
	db := storetest.NewDB(t) // runs: one RUNNING at a time across the database
	ctx := context.Background()
	if _, err := db.FindLastFinishedRun(ctx); hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Fatalf("no runs: %v", err)
	}
	first, err := db.CreateRun(ctx, hoard.TriggerSchedule)
	must(t, err)
	_, err = db.FinishRun(ctx, first.ID, hoard.RunCompleted, "")
	must(t, err)
	time.Sleep(10 * time.Millisecond)
	second, err := db.CreateRun(ctx, hoard.TriggerManual)
	must(t, err)
	_, err = db.FinishRun(ctx, second.ID, hoard.RunFailed, "boom")
	must(t, err)
	third, err := db.CreateRun(ctx, hoard.TriggerManual)
	must(t, err)
	last, err := db.FindLastFinishedRun(ctx)
	must(t, err)
	if last.ID != second.ID || last.Status != hoard.RunFailed || last.ErrorMessage != "boom" {
		t.Fatalf("last finished = %+v (third %d running)", last, third.ID)
	}
}
