package storetest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
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

// TestReaders: each reader returns the whole rows of its table, oldest
// first, and the helpers change only what they say.
func TestReaders(t *testing.T) {
	db := storetest.NewDB(t) // Vacuum cannot run in a transaction
	ctx := context.Background()

	first, second := storetest.Skipped(t, db, storetest.SkippedOpts{FileName: "a.zip"}), storetest.Skipped(t, db, storetest.SkippedOpts{FileName: "b.zip"})
	var skipped []string
	for _, s := range storetest.SkippedPackages(t, db) {
		skipped = append(skipped, s.FileName)
	}
	if diff := cmp.Diff([]string{first.FileName, second.FileName}, skipped); diff != "" {
		t.Errorf("SkippedPackages (-want +got):\n%s", diff)
	}

	r1, err := db.CreateRun(ctx, hoard.TriggerSchedule)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.FinishRun(ctx, r1.ID, hoard.RunCompleted, ""); err != nil { // one run at a time
		t.Fatal(err)
	}
	r2, err := db.CreateRun(ctx, hoard.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	var runs []int64
	for _, r := range storetest.Runs(t, db) {
		runs = append(runs, r.ID)
	}
	if diff := cmp.Diff([]int64{r1.ID, r2.ID}, runs); diff != "" {
		t.Errorf("Runs (-want +got):\n%s", diff)
	}

	g := &hoard.PackageGroup{Name: "Dragons", GroupingSource: hoard.GroupManual}
	empty := &hoard.PackageGroup{Name: "Empty", GroupingSource: hoard.GroupManual}
	for _, g := range []*hoard.PackageGroup{g, empty} {
		if err := db.CreateGroup(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	p := storetest.Package(t, db, storetest.PackageOpts{GroupID: g.ID})
	type group struct {
		Name    string
		Members int
	}
	var groups []group
	for _, g := range storetest.Groups(t, db) {
		groups = append(groups, group{g.Name, g.MemberCount})
	}
	if diff := cmp.Diff([]group{{"Dragons", 1}, {"Empty", 0}}, groups); diff != "" {
		t.Errorf("Groups (-want +got):\n%s", diff)
	}

	var files []hoard.PackageFile
	for i := range 1500 { // more than one page of store.ListPackageFiles
		files = append(files, hoard.PackageFile{Ordinal: i, Path: fmt.Sprintf("d/f%04d.stl", i), FileName: fmt.Sprintf("f%04d.stl", i)})
	}
	if err := db.ReplacePackageFiles(ctx, p.ID, files); err != nil {
		t.Fatal(err)
	}
	got := storetest.PackageFiles(t, db, p.ID)
	if len(got) != len(files) || got[0].Path != "d/f0000.stl" || got[len(got)-1].Path != "d/f1499.stl" {
		t.Errorf("PackageFiles: %d entries, want %d in order", len(got), len(files))
	}

	ch := storetest.Channel(t, db, storetest.ChannelOpts{Forum: true})
	acc := storetest.Account(t, db, storetest.AccountOpts{})
	m, err := db.UpsertChannelMap(ctx, acc.ID, ch.ID, 1, hoard.MapReader)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Minis", "Terrain"} {
		if _, err := db.UpsertTopic(ctx, m.ID, int64(len(name)), name, false); err != nil {
			t.Fatal(err)
		}
	}
	var topics []string
	for _, tp := range storetest.Topics(t, db) {
		topics = append(topics, tp.TopicName)
	}
	if diff := cmp.Diff([]string{"Minis", "Terrain"}, topics); diff != "" {
		t.Errorf("Topics (-want +got):\n%s", diff)
	}

	storetest.Analyze(t, db, "packages", "package_files")
	storetest.Vacuum(t, db, "package_files")

	if err := db.CreateBotSearchPage(ctx, store.BotSearchPage{Token: "token1234", ChatID: 1, Query: "dragon"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	storetest.ExpireBotSearchPages(t, db)
	if _, err := db.FindBotSearchPage(ctx, "token1234"); hoard.ErrorCode(err) != hoard.ENOTFOUND {
		t.Errorf("search page after ExpireBotSearchPages: %v, want ENOTFOUND", err)
	}

	storetest.QueueNotice(t, db, p.ID, 0)
	storetest.QueueNotice(t, db, p.ID, time.Hour) // again: moved, not doubled
	if in, err := db.FindNotifyInbox(ctx); err != nil || in.Packages != 1 || in.SinceNewest < 59*time.Minute {
		t.Errorf("inbox after QueueNotice = %+v, %v; want 1 package an hour old", in, err)
	}
	storetest.AgeNotifyInbox(t, db, 2*time.Hour)
	if in, err := db.FindNotifyInbox(ctx); err != nil || in.Packages != 1 || in.SinceNewest < 119*time.Minute {
		t.Errorf("inbox after AgeNotifyInbox = %+v, %v; want 1 package two hours old", in, err)
	}

	storetest.Clear(t, db, "bot_notify_inbox", "skipped_packages")
	if n, m := storetest.Count(t, db, "bot_notify_inbox"), storetest.Count(t, db, "skipped_packages"); n != 0 || m != 0 {
		t.Errorf("after Clear: %d in the inbox, %d skipped", n, m)
	}
	if n := storetest.Count(t, db, "packages"); n != 1 {
		t.Errorf("Clear deleted packages: %d left", n)
	}

	sends := []int64{storetest.SendRequest(t, db, storetest.SendRequestOpts{}), storetest.SendRequest(t, db, storetest.SendRequestOpts{})}
	var sent []int64
	for _, r := range storetest.SendRequests(t, db) {
		sent = append(sent, r.ID)
	}
	if diff := cmp.Diff(sends, sent); diff != "" {
		t.Errorf("SendRequests (-want +got):\n%s", diff)
	}

	job := storetest.Job(t, db, storetest.JobOpts{Kind: "scan_channel"})
	if j := storetest.Jobs(t, db, storetest.JobMatch{ID: job})[0]; j.CreatedAt.IsZero() || !j.FinalizedAt.IsZero() {
		t.Errorf("running job: created %s, finalized %s; want created, not finalized", j.CreatedAt, j.FinalizedAt)
	}
	storetest.SetJobState(t, db, storetest.JobMatch{ID: job}, rivertype.JobStateCompleted)
	if j := storetest.Jobs(t, db, storetest.JobMatch{ID: job})[0]; j.FinalizedAt.Before(j.CreatedAt) {
		t.Errorf("completed job: created %s, finalized %s", j.CreatedAt, j.FinalizedAt)
	}
}
