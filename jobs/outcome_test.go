package jobs

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
)

// recorder is a subject that keeps what it was asked to write.
type recorder struct{ got []failure }

func (r *recorder) failed(_ context.Context, f failure) error {
	r.got = append(r.got, f)
	return nil
}

// verdict is what finish made of one failure: what River does with the
// job (complete, snooze 4s, cancel or error — River then retries or, on
// the last attempt, discards it), whether the error handed to River still
// wraps the worker's, and what the subject was asked to write ("rec",
// with "final", "gaveUp", "lost" when the failure is final, raises the
// gave-up notification, or reports lost access).
func verdict(in, out error, r *recorder) string {
	var snooze *river.JobSnoozeError
	var cancel *river.JobCancelError
	v := "error"
	switch {
	case out == nil:
		v = "complete"
	case errors.As(out, &snooze):
		v = "snooze " + snooze.Duration.String()
		if snooze.Duration >= sessionBusyWait && snooze.Duration < 2*sessionBusyWait {
			v = "snooze busy"
		}
	case errors.As(out, &cancel):
		v = "cancel"
	}
	if out != nil && !errors.Is(out, in) && snooze == nil {
		v += " (lost the cause)"
	}
	for _, f := range r.got {
		v += " rec"
		if f.final {
			v += " final"
		}
		if f.gaveUp {
			v += " gaveUp"
		}
		if f.accessLost {
			v += " lost"
		}
	}
	return v
}

// TestPolicies: every job kind's failure policy, as finish applies it to
// the failures a worker meets — one subtest per kind. Attempts are 1 of 5
// unless the case says "last".
func TestPolicies(t *testing.T) {
	cases := []struct {
		name    string
		err     error
		attempt int
	}{
		{"transient", fmt.Errorf("find channel: %w", &pgconn.PgError{Code: "57P01", Message: "terminating connection"}), 1},
		{"transient, last", fmt.Errorf("find channel: %w", errors.New("closed pool")), 5},
		{"invalid", hoard.Errorf(hoard.EINVALID, "no parts"), 1},
		{"row gone", fmt.Errorf("claim: %w", hoard.Errorf(hoard.ENOTFOUND, "package 7 not found")), 1},
		{"message gone", fmt.Errorf("messages: %w", messenger.ErrNotFound), 1},
		{"lookup gone", lookup(fmt.Errorf("find job's row: %w", hoard.Errorf(hoard.ENOTFOUND, "row 7 not found"))), 1},
		{"flood wait", fmt.Errorf("get file: %w", &messenger.FloodWait{RetryAfter: 3 * time.Second}), 1},
		{"rate limited", hoard.Errorf(hoard.ERATELIMITED, "slow down"), 1},
		{"session busy", fmt.Errorf("account 1: %w", messenger.ErrSessionBusy), 1},
		{"access lost", fmt.Errorf("history: %w", messenger.ErrAccessLost), 1},
	}
	plain := []string{"error", "error", "error", "error", "error", "cancel", "snooze 4s", "snooze 30s", "snooze busy", "error"}
	cancelling := []string{"error", "error", "cancel", "cancel", "cancel", "cancel", "snooze 4s", "snooze 30s", "snooze busy", "error"}
	scan := []string{"error", "error", "error", "error", "error", "cancel", "snooze 4s", "snooze 30s", "snooze busy", "complete rec lost"}
	set := []string{"error rec", "error rec final gaveUp", "cancel rec final gaveUp", "error rec", "cancel rec final gaveUp", "cancel",
		"snooze 4s", "snooze 30s", "snooze busy", "error rec"}
	run := []string{"error rec", "error rec final", "cancel rec final", "error rec", "cancel rec final", "cancel", "snooze 4s",
		"snooze 30s", "snooze busy", "error rec"}
	login := []string{"error rec", "error rec final", "error rec", "error rec", "error rec", "cancel", "error rec", "error rec",
		"snooze busy", "error rec"}
	for _, tt := range []struct {
		kind string
		want []string
	}{
		{"cleanup", plain},
		{"audit", plain},
		{"ingest_cycle", plain},
		{"recover_transfers", plain},
		{"group_channel", cancelling},
		{"learn_group_rule", cancelling},
		{"rescan_channel", cancelling},
		{"repair_package", cancelling},
		{"retry_skipped", cancelling},
		{"delete_stale_posts", cancelling},
		{"add_bot_admin", cancelling},
		{"scan_channel", scan},
		{"scan_topic", scan},
		{"ingest_message", []string{"error rec", "error rec final gaveUp", "cancel rec final gaveUp", "error rec",
			"cancel rec final gaveUp", "cancel", "snooze 4s", "snooze 30s", "snooze busy", "error rec lost"}},
		{"upload_part", set},
		{"verify", set},
		{"rebuild_from_destination", run},
		{"extract_preview", run},
		{"join_channel", []string{"error rec", "complete rec final", "error rec", "error rec", "error rec", "cancel", "snooze 4s",
			"snooze 30s", "snooze busy", "error rec"}},
		{"manual_upload", []string{"error", "complete rec final", "error", "error", "error", "cancel", "snooze 4s", "snooze 30s", "snooze busy", "error"}},
		{"account_login", login},
		{"account_sign_in", login},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			if len(tt.want) != len(cases) {
				t.Fatalf("%d outcomes for %d cases", len(tt.want), len(cases))
			}
			if _, ok := policies[tt.kind]; !ok {
				t.Fatalf("no policy for %s", tt.kind)
			}
			o := &failures{log: discardLogger()}
			var got []string
			for _, c := range cases {
				r := &recorder{}
				row := &rivertype.JobRow{ID: 1, Kind: tt.kind, Attempt: c.attempt, MaxAttempts: 5}
				got = append(got, c.name+": "+verdict(c.err, o.finish(context.Background(), row, c.err, r), r))
			}
			var want []string
			for i, c := range cases {
				want = append(want, c.name+": "+tt.want[i])
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("got  %s\nwant %s", got[i], want[i])
				}
			}
		})
	}
	if len(policies) != 22 {
		t.Errorf("%d policies, want one per kind of the 22 above", len(policies))
	}
}

// TestFinishPassesWorkerDecisions: a snooze or cancellation the worker
// chose, success, a part job still finishing and an attempt the shutdown
// interrupted are the same under every policy.
func TestFinishPassesWorkerDecisions(t *testing.T) {
	stopped, stop := context.WithCancel(context.Background())
	stop()
	for _, tt := range []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"success completes", context.Background(), nil, "complete"},
		{"a snooze passes as it is", context.Background(), river.JobSnooze(5 * time.Second), "snooze 5s"},
		{"a cancel passes as it is", context.Background(), river.JobCancel(errors.New("decided by the worker")), "cancel"},
		{"a part job still finishing waits a moment", context.Background(), fmt.Errorf("part 2: %w", errPartJobUnfinished), "snooze 1s"},
		{"a part just split waits a moment", context.Background(), errPartSplit, "snooze 1s"},
		{"an interrupted attempt is no failure", stopped, errors.New("download: context canceled"), "error"},
	} {
		for kind := range policies {
			r := &recorder{}
			row := &rivertype.JobRow{ID: 1, Kind: kind, Attempt: 1, MaxAttempts: 5}
			if got := verdict(tt.err, (&failures{log: discardLogger()}).finish(tt.ctx, row, tt.err, r), r); got != tt.want {
				t.Errorf("%s: %s = %q, want %q", tt.name, kind, got, tt.want)
			}
		}
	}
}

// fate names what became of a job after one attempt: retried (available
// or retryable: another attempt follows), cancelled, completed or
// discarded.
func fate(s rivertype.JobState) string {
	switch s {
	case rivertype.JobStateAvailable, rivertype.JobStateRetryable:
		return "retried"
	}
	return string(s)
}

// lockTimeoutDB opens a second pool on the database of url whose
// statements give up after 300 ms waiting for a lock: a lookup of a table
// another transaction holds fails with a transient error (55P03), the kind
// a dropped connection or a restarting server gives.
func lockTimeoutDB(t *testing.T, dbURL string) *store.DB {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("lock_timeout", "300ms")
	u.RawQuery = q.Encode()
	db, err := store.Open(context.Background(), u.String(), store.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// shelf is what the worker tests below look up: an account reading a
// source channel (a forum with topic 5), the destination, and a transfer
// of the set at message msg in PUBLISHING.
type shelf struct {
	account  *hoard.Account
	src      *hoard.Channel
	dest     *hoard.Channel
	mapID    int64
	transfer *hoard.Transfer
}

func seedShelf(t *testing.T, db *store.DB, msg int64) shelf {
	t.Helper()
	ctx := context.Background()
	acc, err := db.CreateAccount(ctx, "+15550002222")
	if err != nil {
		t.Fatal(err)
	}
	s := shelf{account: acc, src: &hoard.Channel{PlatformID: 7001, Title: "Forum", Kind: hoard.ChannelSource, IsActive: true, IsForum: true},
		dest: &hoard.Channel{PlatformID: 7002, Title: "Archive", Kind: hoard.ChannelDestination}}
	for _, ch := range []*hoard.Channel{s.src, s.dest} {
		if err := db.UpsertChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	m, err := db.UpsertChannelMap(ctx, acc.ID, s.src.ID, 1, hoard.MapReader)
	if err != nil {
		t.Fatal(err)
	}
	s.mapID = m.ID
	if _, err := db.UpsertTopic(ctx, m.ID, 5, "Dragons", false); err != nil {
		t.Fatal(err)
	}
	s.transfer = &hoard.Transfer{SourceChannelID: s.src.ID, SourceMessageID: msg, AccountID: acc.ID, DestChannelID: s.dest.ID,
		ContentHash: strings.Repeat("ab", 32), Draft: hoard.Package{FileName: "Wings.zip", FileSize: 10}}
	if err := db.CreateTransfer(ctx, s.transfer, []hoard.TransferPart{{Name: "Wings.zip", Length: 10}}); err != nil {
		t.Fatal(err)
	}
	return s
}

// workIn runs one job of args with worker in tx (rivertest).
func workIn[T river.JobArgs](ctx context.Context, t *testing.T, tx pgx.Tx, worker river.Worker[T], args T, opts *river.InsertOpts) (*rivertest.WorkResult, error) {
	t.Helper()
	return rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, worker).Work(ctx, t, tx, args, opts)
}

// TestWorkersRetryTransientLookupErrors: a worker whose lookup of the thing
// it works on fails for a passing reason (the table is locked past the
// lock timeout: a transient database error) leaves its job to be retried;
// only a thing that is gone cancels it.
func TestWorkersRetryTransientLookupErrors(t *testing.T) {
	ctx := context.Background()
	dbURL := storetest.URL(t)
	seed, err := store.Open(ctx, dbURL, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(seed.Close)
	sh := seedShelf(t, seed, 40)
	deps := Deps{DB: lockTimeoutDB(t, dbURL), Logger: discardLogger(), Accounts: oneAccount{}, SpoolDir: t.TempDir(), MaxSkipAttempts: 5}
	deps.defaults()
	// gone picks the id of a thing that does not exist.
	gone := func(g bool, id, missing int64) int64 {
		if g {
			return missing
		}
		return id
	}
	for _, tt := range []struct {
		name  string
		table string // the table the lookup reads, locked for the transient case
		work  func(ctx context.Context, tx pgx.Tx, g bool) (*rivertest.WorkResult, error)
	}{
		{"rescan_channel", "messenger_channels", func(ctx context.Context, tx pgx.Tx, g bool) (*rivertest.WorkResult, error) {
			return workIn(ctx, t, tx, river.Worker[hoard.RescanChannelArgs](newRescanChannelWorker(newParts(deps))),
				hoard.RescanChannelArgs{ChannelID: gone(g, sh.src.ID, -1)}, nil)
		}},
		{"repair_package", "packages", func(ctx context.Context, tx pgx.Tx, g bool) (*rivertest.WorkResult, error) {
			return workIn(ctx, t, tx, river.Worker[hoard.RepairPackageArgs](newRepairPackageWorker(newParts(deps))),
				hoard.RepairPackageArgs{PackageID: -1}, nil)
		}},
		{"retry_skipped", "skipped_packages", func(ctx context.Context, tx pgx.Tx, g bool) (*rivertest.WorkResult, error) {
			return workIn(ctx, t, tx, river.Worker[hoard.RetrySkippedArgs](newRetrySkippedWorker(newParts(deps))),
				hoard.RetrySkippedArgs{SkippedID: -1}, nil)
		}},
		{"scan_topic", "topic_progress", func(ctx context.Context, tx pgx.Tx, g bool) (*rivertest.WorkResult, error) {
			return workIn(ctx, t, tx, river.Worker[hoard.ScanTopicArgs](newScanTopicWorker(newParts(deps))),
				hoard.ScanTopicArgs{MapID: sh.mapID, TopicID: gone(g, 5, 6)}, nil)
		}},
		{"upload_part", "transfer_parts", func(ctx context.Context, tx pgx.Tx, g bool) (*rivertest.WorkResult, error) {
			return workIn(ctx, t, tx, river.Worker[hoard.UploadPartArgs](newUploadPartWorker(newParts(deps))),
				hoard.UploadPartArgs{TransferID: sh.transfer.ID, PartNo: int(gone(g, 0, 3))}, &river.InsertOpts{MaxAttempts: 5})
		}},
	} {
		for _, c := range []struct {
			name string
			gone bool
			want string
		}{
			{"transient database error retries", false, "retried"},
			{"gone cancels", true, "cancelled"},
		} {
			t.Run(tt.name+"/"+c.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				// The job lives in a transaction of its own, rolled back at
				// the end; in the transient case it also holds the table.
				tx, err := seed.Pool().Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = tx.Rollback(context.Background()) }()
				if !c.gone {
					if _, err := tx.Exec(ctx, "LOCK TABLE "+tt.table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
						t.Fatal(err)
					}
				}
				res, err := tt.work(ctx, tx, c.gone)
				if res == nil {
					t.Fatalf("work: %v", err)
				}
				if got := fate(res.Job.State); got != c.want {
					t.Errorf("job %s (state %s, err %v), want %s", got, res.Job.State, err, c.want)
				}
			})
		}
	}
}

// TestNextRetry: a source set's job gets a quick first retry, then one
// attempt per cycle, so an outage of one interval never spends its budget;
// a cycle retries soon, doubling; an extraction the user waits for, soon;
// the others follow River's backoff.
func TestNextRetry(t *testing.T) {
	d := Deps{DB: &store.DB{}, WorkerInterval: time.Hour}
	d.defaults()
	custom := Deps{DB: &store.DB{}, WorkerInterval: time.Hour, RetryBase: time.Second, LaterRetry: 2 * time.Second}
	custom.defaults()
	for _, tt := range []struct {
		name    string
		deps    Deps
		kind    string
		attempt int
		want    time.Duration // -1: River's own
	}{
		{"first failure: quick retry", d, "ingest_message", 1, 30 * time.Second},
		{"second failure: next cycle", d, "upload_part", 2, time.Hour},
		{"fourth failure: next cycle", d, "verify", 4, time.Hour},
		{"demo: quick first retry", custom, "ingest_message", 1, time.Second},
		{"demo: later retries as set", custom, "ingest_message", 3, 2 * time.Second},
		{"a cycle retries soon", d, "ingest_cycle", 1, 5 * time.Second},
		{"then doubling", d, "ingest_cycle", 3, 20 * time.Second},
		{"up to an hour", d, "ingest_cycle", 20, time.Hour},
		{"an extraction the user waits for", d, "extract_preview", 2, 10 * time.Second},
		{"others: River's backoff", d, "group_channel", 2, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now()
			got := newParts(tt.deps).fail.nextRetry(tt.kind, tt.attempt)
			if tt.want < 0 {
				if !got.IsZero() {
					t.Errorf("nextRetry(%s, %d) = %v, want River's", tt.kind, tt.attempt, got)
				}
				return
			}
			if got.Before(before.Add(tt.want)) || got.After(time.Now().Add(tt.want)) {
				t.Errorf("nextRetry(%s, %d) = now+%v, want now+%v", tt.kind, tt.attempt, got.Sub(before), tt.want)
			}
		})
	}
}

// waitingJob inserts a job of args in tx, then puts it in state, due in
// an hour after two attempts; it returns its id.
func waitingJob(t *testing.T, tx pgx.Tx, args river.JobArgs, state string) int64 {
	t.Helper()
	ctx := context.Background()
	client, err := river.NewClient(riverpgxv5.New(nil), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.InsertTx(ctx, tx, args, nil)
	if err != nil {
		t.Fatal(err)
	}
	storetest.UpdateJobs(t, store.WithTx(tx), storetest.JobMatch{ID: res.Job.ID},
		storetest.JobChange{State: rivertype.JobState(state), Attempt: 2, ScheduledAt: time.Now().Add(time.Hour)})
	return res.Job.ID
}

// TestRetrySkippedTriesAWaitingSetNow: a manual retry of a set whose jobs
// wait for a later cycle makes them available at once (no second job for
// the set); jobs running, final or of another set are left as they are.
func TestRetrySkippedTriesAWaitingSetNow(t *testing.T) {
	for _, tt := range []struct {
		name      string
		kind      string // the waiting job's kind; "" = no job
		state     string // its state before the retry
		otherSet  bool   // the job belongs to another set
		wantState rivertype.JobState
		wantNow   bool // scheduled to run now
	}{
		{"download waiting for a later cycle", "ingest_message", "retryable", false, rivertype.JobStateAvailable, true},
		{"download snoozed", "ingest_message", "scheduled", false, rivertype.JobStateAvailable, true},
		{"upload waiting for a later cycle", "upload_part", "retryable", false, rivertype.JobStateAvailable, true},
		{"verification waiting for a later cycle", "verify", "retryable", false, rivertype.JobStateAvailable, true},
		{"another set's download", "ingest_message", "retryable", true, rivertype.JobStateRetryable, false},
		{"another set's upload", "upload_part", "retryable", true, rivertype.JobStateRetryable, false},
		{"running", "ingest_message", "running", false, rivertype.JobStateRunning, false},
		{"given up", "ingest_message", "discarded", false, rivertype.JobStateDiscarded, false},
		{"no job", "", "", false, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := storetest.NewTx(t)
			ctx := context.Background()
			msg := int64(42)
			if tt.otherSet {
				msg = 43
			}
			sh := seedShelf(t, db, msg)
			var jobID int64
			switch tt.kind {
			case "ingest_message":
				jobID = waitingJob(t, db.Tx(), hoard.IngestMessageArgs{ChannelID: sh.src.ID, MessageID: msg, FileName: "Wings.zip"}, tt.state)
			case "upload_part":
				jobID = waitingJob(t, db.Tx(), hoard.UploadPartArgs{TransferID: sh.transfer.ID}, tt.state)
			case "verify":
				jobID = waitingJob(t, db.Tx(), hoard.VerifyTransferArgs{TransferID: sh.transfer.ID}, tt.state)
			}
			sk := &hoard.SkippedPackage{SourceChannelID: sh.src.ID, SourceMessageID: 42, FileName: "Wings.zip", FileSize: 10,
				Reason: hoard.SkipDownloadFailed, AttemptCount: 2}
			if err := db.UpsertSkippedPackage(ctx, sk); err != nil {
				t.Fatal(err)
			}
			w := newRetrySkippedWorker(newParts(Deps{DB: db, Logger: discardLogger()}))
			res, err := workIn(ctx, t, db.Tx(), river.Worker[hoard.RetrySkippedArgs](w), hoard.RetrySkippedArgs{SkippedID: sk.ID}, nil)
			if err != nil || res.Job.State != rivertype.JobStateCompleted {
				t.Fatalf("retry: %v, state %v", err, res.Job.State)
			}
			type state struct {
				State rivertype.JobState
				Now   bool
				Jobs  int // jobs of the set's kinds
			}
			got, want := state{}, state{State: tt.wantState, Now: tt.wantNow}
			for _, kind := range []string{"ingest_message", "upload_part", "verify"} {
				got.Jobs += len(storetest.Jobs(t, db, storetest.JobMatch{Kind: kind}))
			}
			if jobID != 0 {
				want.Jobs = 1
				job := storetest.Jobs(t, db, storetest.JobMatch{ID: jobID})[0]
				got.State, got.Now = job.State, !job.ScheduledAt.After(time.Now())
			}
			if got != want {
				t.Errorf("after the retry: %+v, want %+v", got, want)
			}
		})
	}
}
