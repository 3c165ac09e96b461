package queue_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river"
)

// actArgs is a job that ends as Do says.
type actArgs struct {
	Do string `json:"do"`
}

func (actArgs) Kind() string { return "test_act" }

type actWorker struct{ river.WorkerDefaults[actArgs] }

func (actWorker) Work(ctx context.Context, job *river.Job[actArgs]) error {
	switch job.Args.Do {
	case "snooze":
		return river.JobSnooze(time.Hour)
	case "cancel":
		return river.JobCancel(errors.New("bad input"))
	case "fail":
		return errors.New("broken")
	case "fail wrapped snooze":
		return errors.Join(errors.New("context"), river.JobSnooze(time.Hour))
	case "panic":
		panic("boom")
	}
	return nil
}

// jobLog is a queue.JobObserver that keeps what it heard.
type jobLog struct {
	mu    sync.Mutex
	heard []string
	took  []time.Duration
	n     chan struct{}
}

func (l *jobLog) JobWorked(kind, queue, outcome string, took time.Duration) {
	l.mu.Lock()
	l.heard = append(l.heard, kind+"|"+queue+"|"+outcome)
	l.took = append(l.took, took)
	l.mu.Unlock()
	l.n <- struct{}{}
}

// TestJobObserverHearsEveryOutcome works a job of every outcome with an
// observer and checks what it heard: kind, queue and outcome of each.
func TestJobObserverHearsEveryOutcome(t *testing.T) {
	db := storetest.NewDB(t)
	ctx := context.Background()
	workers := river.NewWorkers()
	river.AddWorker(workers, actWorker{})
	log := &jobLog{n: make(chan struct{}, 10)}
	client, err := queue.NewClient(db.Pool(), queue.Options{Role: queue.RoleWorker, Workers: workers, Jobs: log,
		FetchCooldown: 10 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = queue.Stop(context.Background(), client) })
	acts := []string{"complete", "snooze", "cancel", "fail", "fail wrapped snooze", "panic"}
	for _, do := range acts {
		if _, err := client.Insert(ctx, actArgs{Do: do}, &river.InsertOpts{Queue: hoard.QueueIngest, MaxAttempts: 1}); err != nil {
			t.Fatal(err)
		}
	}
	for range acts {
		select {
		case <-log.n:
		case <-time.After(30 * time.Second):
			t.Fatalf("the observer heard of %d jobs of %d", len(log.heard), len(acts))
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	got := slices.Sorted(slices.Values(log.heard))
	want := []string{"test_act|ingest|cancelled", "test_act|ingest|completed", "test_act|ingest|failed",
		"test_act|ingest|failed", "test_act|ingest|snoozed", "test_act|ingest|snoozed"}
	if !slices.Equal(got, want) {
		t.Errorf("observer heard\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
	for i, d := range log.took {
		if d <= 0 {
			t.Errorf("observation %d (%s) took %v", i, log.heard[i], d)
		}
	}
}
