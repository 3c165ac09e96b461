package storetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river/rivertype"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// TestBuildersStoreWhatTheyAreTold: each builder's row reads back with its
// options, and its defaults are unique and valid.
func TestBuildersStoreWhatTheyAreTold(t *testing.T) {
	db := storetest.NewTx(t)
	ctx := context.Background()

	a, b := storetest.Package(t, db, storetest.PackageOpts{}), storetest.Package(t, db, storetest.PackageOpts{})
	if a.FileName == b.FileName || a.ContentHash == b.ContentHash {
		t.Errorf("two default packages share a name or hash: %q %q, %q %q", a.FileName, b.FileName, a.ContentHash, b.ContentHash)
	}
	src := storetest.Channel(t, db, storetest.ChannelOpts{Title: "STL Emporium", Username: "stlemporium", Active: true})
	p := storetest.Package(t, db, storetest.PackageOpts{FileName: "Dragon.zip", Creator: "Mammoth", Tags: []string{"STL"},
		SourceChannelID: src.ID, SourceMessageIDs: []int64{7, 8}, PartCount: 2, DestMessageIDs: []int64{70, 71}})
	got, err := db.FindPackageByID(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	type pkg struct {
		FileName, Creator                  string
		Tags                               []string
		SourceChannelID, SourceMessageID   int64
		PartCount                          int
		DestMessageIDs                     []int64
		Published, ArchiveZIP, SourceTitle bool
	}
	dest, err := db.FindChannelByID(ctx, got.DestChannelID)
	if err != nil {
		t.Fatal(err)
	}
	want := pkg{"Dragon.zip", "Mammoth", []string{"STL"}, src.ID, 7, 2, []int64{70, 71}, true, true, true}
	have := pkg{got.FileName, got.Creator, got.Tags, got.SourceChannelID, got.SourceMessageID, got.PartCount, got.DestMessageIDs,
		dest.Kind == hoard.ChannelDestination, got.ArchiveType == hoard.ArchiveZIP, src.Title == "STL Emporium" && src.IsActive}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("package (-want +got):\n%s", diff)
	}

	acc := storetest.Account(t, db, storetest.AccountOpts{AuthState: hoard.AuthAuthenticated})
	if acc.AuthState != hoard.AuthAuthenticated || acc.Phone == "" {
		t.Errorf("account = %+v", acc)
	}
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	inv := storetest.Invite(t, db, storetest.InviteOpts{ExpiresAt: past})
	if found, err := db.FindInviteByCode(ctx, inv.Code); err != nil || found.ExpiresAt == nil || !found.ExpiresAt.Equal(past) {
		t.Errorf("invite = %+v, %v; want it expired at %s", found, err, past)
	}
	n := storetest.Notification(t, db, storetest.NotificationOpts{DismissedAt: past})
	if !n.Dismissed || n.DismissedAt == nil || !n.DismissedAt.Equal(past) {
		t.Errorf("notification = %+v; want it dismissed at %s", n, past)
	}
	s := storetest.Skipped(t, db, storetest.SkippedOpts{})
	if found, err := db.FindSkippedPackage(ctx, s.ID); err != nil || found.SourceChannelID == 0 || found.FileName != s.FileName {
		t.Errorf("skipped = %+v, %v", found, err)
	}
	if req, err := db.FindBotSendRequest(ctx, storetest.SendRequest(t, db, storetest.SendRequestOpts{PackageID: a.ID})); err != nil ||
		req.PackageID != a.ID || req.Status != hoard.SendPending {
		t.Errorf("send request = %+v, %v", req, err)
	}
	if got := storetest.Count(t, db, "packages"); got != 3 {
		t.Errorf("Count(packages) = %d, want 3", got)
	}
}

// TestJobs: Job stores rows that Jobs reads back by kind, id and args;
// SetJobState and DeleteJobs change only the jobs they select.
func TestJobs(t *testing.T) {
	db := storetest.NewTx(t)
	scan := storetest.Job(t, db, storetest.JobOpts{Kind: "scan_topic", Args: map[string]any{"map_id": 1, "topic_id": 33}, Queue: "ingest"})
	other := storetest.Job(t, db, storetest.JobOpts{Kind: "scan_topic", Args: map[string]any{"map_id": 1, "topic_id": 44},
		State: rivertype.JobStateAvailable})
	upload := storetest.Job(t, db, storetest.JobOpts{Kind: "upload_part", Metadata: `{"snoozes": 2}`})

	type job struct {
		ID      int64
		Kind    string
		Queue   string
		State   rivertype.JobState
		Attempt int
		Topic   any
	}
	jobs := func(m storetest.JobMatch) []job {
		var out []job
		for _, j := range storetest.Jobs(t, db, m) {
			out = append(out, job{j.ID, j.Kind, j.Queue, j.State, j.Attempt, j.Args["topic_id"]})
		}
		return out
	}
	tests := []struct {
		name  string
		match storetest.JobMatch
		want  []job
	}{
		{"all", storetest.JobMatch{}, []job{
			{scan, "scan_topic", "ingest", rivertype.JobStateRunning, 1, float64(33)},
			{other, "scan_topic", "default", rivertype.JobStateAvailable, 0, float64(44)},
			{upload, "upload_part", "default", rivertype.JobStateRunning, 1, nil},
		}},
		{"by kind", storetest.JobMatch{Kind: "upload_part"}, []job{{upload, "upload_part", "default", rivertype.JobStateRunning, 1, nil}}},
		{"by id", storetest.JobMatch{ID: other}, []job{{other, "scan_topic", "default", rivertype.JobStateAvailable, 0, float64(44)}}},
		{"by args", storetest.JobMatch{Args: map[string]any{"topic_id": 33}},
			[]job{{scan, "scan_topic", "ingest", rivertype.JobStateRunning, 1, float64(33)}}},
		{"by kind, nil args", storetest.JobMatch{Kind: "upload_part", Args: map[string]any(nil)},
			[]job{{upload, "upload_part", "default", rivertype.JobStateRunning, 1, nil}}},
		{"none", storetest.JobMatch{Kind: "bot_send"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, jobs(tt.match)); diff != "" {
				t.Errorf("jobs (-want +got):\n%s", diff)
			}
		})
	}
	if got := storetest.Jobs(t, db, storetest.JobMatch{ID: upload})[0].Metadata["snoozes"]; got != float64(2) {
		t.Errorf("metadata snoozes = %v, want 2", got)
	}
	if n := storetest.SetJobState(t, db, storetest.JobMatch{Kind: "scan_topic"}, rivertype.JobStateCompleted); n != 2 {
		t.Errorf("SetJobState moved %d jobs, want 2", n)
	}
	later := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	if n := storetest.UpdateJobs(t, db, storetest.JobMatch{ID: upload}, storetest.JobChange{State: rivertype.JobStateRetryable, Attempt: 2,
		ScheduledAt: later}); n != 1 {
		t.Errorf("UpdateJobs changed %d jobs, want 1", n)
	}
	if j := storetest.Jobs(t, db, storetest.JobMatch{ID: upload})[0]; j.State != rivertype.JobStateRetryable || j.Attempt != 2 || !j.ScheduledAt.Equal(later) {
		t.Errorf("after UpdateJobs: %s, attempt %d, scheduled at %s; want retryable, 2, %s", j.State, j.Attempt, j.ScheduledAt, later)
	}
	storetest.UpdateJobs(t, db, storetest.JobMatch{ID: upload}, storetest.JobChange{State: rivertype.JobStateRunning, Attempt: 1})
	if n := storetest.DeleteJobs(t, db, storetest.JobMatch{ID: scan}); n != 1 {
		t.Errorf("DeleteJobs deleted %d jobs, want 1", n)
	}
	want := []job{
		{other, "scan_topic", "default", rivertype.JobStateCompleted, 0, float64(44)},
		{upload, "upload_part", "default", rivertype.JobStateRunning, 1, nil},
	}
	if diff := cmp.Diff(want, jobs(storetest.JobMatch{})); diff != "" {
		t.Errorf("after SetJobState and DeleteJobs (-want +got):\n%s", diff)
	}
}
