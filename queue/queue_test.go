package queue_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/queue"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

func TestMain(m *testing.M) { storetest.Main(m) }

type pingArgs struct {
	Queue string `json:"queue"`
}

func (pingArgs) Kind() string { return "test_ping" }

type pongArgs struct{}

func (pongArgs) Kind() string { return "test_pong" }

type pingWorker struct {
	river.WorkerDefaults[pingArgs]
	done chan string
}

func (w *pingWorker) Work(ctx context.Context, job *river.Job[pingArgs]) error {
	w.done <- job.Queue
	return nil
}

func TestQueuesFor(t *testing.T) {
	tests := []struct {
		role queue.Role
		want []string
	}{
		{queue.RoleWorker, []string{hoard.QueueIngest, hoard.QueueTransfer, hoard.QueueMaintenance}},
		{queue.RoleBot, []string{hoard.QueueBot}},
		{queue.RoleAll, hoard.Queues},
	}
	for _, tt := range tests {
		if got := queue.QueuesFor(tt.role); !slices.Equal(got, tt.want) {
			t.Errorf("QueuesFor(%d) = %v, want %v", tt.role, got, tt.want)
		}
	}
}

func TestNewClientValidates(t *testing.T) {
	db := storetest.NewDB(t)
	workers := river.NewWorkers()
	river.AddWorker(workers, &pingWorker{})
	for name, opts := range map[string]queue.Options{
		"no workers":       {Role: queue.RoleWorker},
		"zero concurrency": {Role: queue.RoleWorker, Workers: workers, Concurrency: map[string]int{hoard.QueueIngest: 0}},
		"unknown queue":    {Role: queue.RoleWorker, Workers: workers, Concurrency: map[string]int{"nope": 2}},
		"too many at once": {Role: queue.RoleBot, Workers: workers, Concurrency: map[string]int{hoard.QueueBot: 20000}},
	} {
		if _, err := queue.NewClient(db.Pool(), opts); err == nil {
			t.Errorf("%s: NewClient accepted invalid options", name)
		}
	}
}

// TestRolesWorkOnlyTheirQueuesAndKinds runs a worker-role client and checks
// that it works jobs of its queues, leaves the bot queue alone, and never
// fetches a kind it has no worker for.
func TestRolesWorkOnlyTheirQueuesAndKinds(t *testing.T) {
	db := storetest.NewDB(t)
	ctx := context.Background()
	ping := &pingWorker{done: make(chan string, 10)}
	workers := river.NewWorkers()
	river.AddWorker(workers, ping)
	client, err := queue.NewClient(db.Pool(), queue.Options{Role: queue.RoleWorker, Workers: workers,
		FetchCooldown: 10 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = queue.Stop(context.Background(), client) })

	inserter, err := queue.NewInsertOnly(db.Pool(), nil)
	if err != nil {
		t.Fatal(err)
	}
	botJob, err := inserter.Insert(ctx, pingArgs{}, &river.InsertOpts{Queue: hoard.QueueBot})
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := inserter.Insert(ctx, pongArgs{}, &river.InsertOpts{Queue: hoard.QueueIngest})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inserter.Insert(ctx, pingArgs{}, &river.InsertOpts{Queue: hoard.QueueMaintenance}); err != nil {
		t.Fatal(err)
	}
	select {
	case q := <-ping.done:
		if q != hoard.QueueMaintenance {
			t.Fatalf("worked a job of queue %q", q)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the maintenance job did not run")
	}
	time.Sleep(300 * time.Millisecond) // several fetch rounds
	for _, id := range []int64{botJob.Job.ID, foreign.Job.ID} {
		j, err := client.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != rivertype.JobStateAvailable || j.Attempt != 0 {
			t.Errorf("job %d (%s on %s) = %s attempt %d; want untouched", id, j.Kind, j.Queue, j.State, j.Attempt)
		}
	}
}

// TestBotRoleRunsScheduledJobsAlone: a bot process with no worker beside
// it leads, so its scheduled jobs (snoozes, notices) run.
func TestBotRoleRunsScheduledJobsAlone(t *testing.T) {
	db := storetest.NewDB(t)
	ctx := context.Background()
	ping := &pingWorker{done: make(chan string, 1)}
	workers := river.NewWorkers()
	river.AddWorker(workers, ping)
	client, err := queue.NewClient(db.Pool(), queue.Options{Role: queue.RoleBot, Workers: workers,
		FetchCooldown: 10 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = queue.Stop(context.Background(), client) })
	// Beyond the scheduler's short-snooze shortcut: only a leader's
	// scheduler makes this job available.
	if _, err := client.Insert(ctx, pingArgs{}, &river.InsertOpts{Queue: hoard.QueueBot, ScheduledAt: time.Now().Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	select {
	case q := <-ping.done:
		if q != hoard.QueueBot {
			t.Fatalf("worked a job of queue %q", q)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the scheduled bot job did not run: no process leads")
	}
}
