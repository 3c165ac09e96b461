package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river/rivertype"
)

func TestChannelSettingsRetagPackages(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	ch := &hoard.Channel{PlatformID: 5, Title: "Minis <b>", Kind: hoard.ChannelSource, Category: "STL"}
	if err := e.db.UpsertChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	p := &hoard.Package{FileName: "a.zip", FileSize: 1, ArchiveType: hoard.ArchiveZIP, Tags: []string{"STL", "Dragons"}, SourceChannelID: ch.ID}
	if err := e.db.CreatePackage(ctx, p); err != nil {
		t.Fatal(err)
	}
	_, body := e.do(nil, "GET", "/admin/messenger", nil, c)
	if !strings.Contains(body, "Minis &lt;b&gt;") || !strings.Contains(body, `value="STL"`) {
		t.Fatal("channel row missing or unescaped")
	}
	resp, _ := e.do(nil, "POST", fmt.Sprintf("/admin/messenger/channels/%d", ch.ID),
		url.Values{"category": {"Terrain"}, "active": {"on"}}, c)
	if resp.StatusCode != 303 {
		t.Fatalf("save = %d", resp.StatusCode)
	}
	got, _ := e.db.FindChannelByID(ctx, ch.ID)
	if got.Category != "Terrain" || !got.IsActive || got.AutoGroupEnabled {
		t.Fatalf("channel after save: %+v", got)
	}
	pkg, _ := e.db.FindPackageByID(ctx, p.ID)
	if !slices.Equal(pkg.Tags, []string{"Terrain", "Dragons"}) {
		t.Fatalf("tags after category change = %q", pkg.Tags)
	}
	if resp, _ := e.do(nil, "POST", fmt.Sprintf("/admin/messenger/channels/%d", ch.ID), url.Values{"category": {strings.Repeat("x", 65)}}, c); resp.StatusCode != 422 {
		t.Fatalf("long category = %d", resp.StatusCode)
	}
}

func TestTopicsAPIAndToggles(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	ch := &hoard.Channel{PlatformID: 6, Title: "Forum", Kind: hoard.ChannelSource, IsForum: true}
	if err := e.db.UpsertChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	acc, _ := e.db.CreateAccount(ctx, "+15550001")
	m, _ := e.db.UpsertChannelMap(ctx, acc.ID, ch.ID, 1, hoard.MapReader)
	if _, err := e.db.UpsertTopic(ctx, m.ID, 1, "General", true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.UpsertTopic(ctx, m.ID, 9, "Dragons", false); err != nil {
		t.Fatal(err)
	}
	_, body := e.do(nil, "GET", fmt.Sprintf("/api/messenger/channels/%d/topics", ch.ID), nil, c)
	var out struct {
		IsForum bool        `json:"is_forum"`
		Topics  []topicJSON `json:"topics"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	if !out.IsForum {
		t.Fatalf("not a forum: %s", body)
	}
	want := []topicJSON{{TopicID: 1, Name: "General", IsGeneral: true, FetchEnabled: true}, {TopicID: 9, Name: "Dragons", FetchEnabled: true}}
	if diff := cmp.Diff(want, out.Topics); diff != "" {
		t.Fatalf("topics (-want +got):\n%s", diff)
	}
	resp, body := e.do(nil, "POST", fmt.Sprintf("/api/messenger/channels/%d/topics/9", ch.ID), url.Values{"fetch_enabled": {"false"}}, c)
	if resp.StatusCode != 200 || !strings.Contains(body, `"fetch_enabled":false`) {
		t.Fatalf("toggle = %d %s", resp.StatusCode, body)
	}
	if on, _ := e.db.IsTopicFetchEnabled(ctx, m.ID, 9); on {
		t.Fatal("topic still enabled")
	}
	resp, _ = e.do(nil, "POST", fmt.Sprintf("/api/messenger/channels/%d/topics/9", ch.ID), url.Values{"fetch_enabled": {"true"}, "from": {"page"}}, c)
	if on, _ := e.db.IsTopicFetchEnabled(ctx, m.ID, 9); resp.StatusCode != 303 || !on {
		t.Fatalf("re-enable from the page: %d, enabled %v", resp.StatusCode, on)
	}
	if _, body = e.do(nil, "GET", fmt.Sprintf("/admin/messenger/channels/%d", ch.ID), nil, c); !strings.Contains(body, "Dragons") {
		t.Fatal("channel page lacks the topic")
	}
}

// TestIngestionStatusAndDisableActiveTopic: the worker panel's status lists
// every forum topic in progress (the cycle's current one and those of
// running jobs), and disableActiveTopic acts on the topic named: that one
// stops, the other goes on; a topic not in progress is refused, with a
// notice on the page for the panel's form.
func TestIngestionStatusAndDisableActiveTopic(t *testing.T) {
	e := newEnv(t, func(d *Deps) { d.WorkerInterval = 3600e9 })
	ctx := context.Background()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	_, body := e.do(nil, "GET", "/api/ingestion/status", nil, c)
	if !strings.Contains(body, `"running":null`) || !strings.Contains(body, `"interval_seconds":3600`) || !strings.Contains(body, `"topics":[]`) {
		t.Fatalf("idle status = %s", body)
	}
	// A fresh install (no run yet) shows the cycle River schedules next.
	var idle struct {
		Next time.Time `json:"next_cycle_at"`
	}
	if err := json.Unmarshal([]byte(body), &idle); err != nil {
		t.Fatal(err)
	}
	if want := hoard.NextScheduledCycle(time.Now(), time.Hour); !idle.Next.Equal(want) && !idle.Next.Add(time.Hour).Equal(want) {
		t.Fatalf("fresh install: next cycle at %s, want %s", idle.Next, want)
	}
	ch := &hoard.Channel{PlatformID: 7, Title: "Forum", Kind: hoard.ChannelSource, IsForum: true}
	_ = e.db.UpsertChannel(ctx, ch)
	acc, _ := e.db.CreateAccount(ctx, "+15550002")
	m, _ := e.db.UpsertChannelMap(ctx, acc.ID, ch.ID, 1, hoard.MapReader)
	_, _ = e.db.UpsertTopic(ctx, m.ID, 33, "Dragons", false)
	_, _ = e.db.UpsertTopic(ctx, m.ID, 44, "Terrain", false)
	done, _ := e.db.CreateRun(ctx, hoard.TriggerSchedule)
	_, _ = e.db.FinishRun(ctx, done.ID, hoard.RunCompleted, "")
	run, err := e.db.CreateRun(ctx, hoard.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.SetRunActivity(ctx, run.ID, hoard.RunActivity{Activity: "downloading", Step: "downloading", ChannelID: ch.ID,
		TopicID: 33, AccountChannelMapID: m.ID, File: "x.zip", Bytes: 50, TotalBytes: 100}); err != nil {
		t.Fatal(err)
	}
	// Another job works on another topic at the same time.
	storetest.Job(t, e.db, storetest.JobOpts{Kind: "ingest_message", Queue: "ingest",
		Args: map[string]any{"map_id": m.ID, "topic_id": 44, "channel_id": ch.ID, "message_id": 9}})
	var st struct {
		Running struct {
			TopicID int64 `json:"current_topic_id"`
		} `json:"running"`
		Topics []activeTopicJSON `json:"topics"`
	}
	status := func() []activeTopicJSON {
		t.Helper()
		_, body := e.do(nil, "GET", "/api/ingestion/status", nil, c)
		st.Topics = nil
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatal(err)
		}
		return st.Topics
	}
	dragons := activeTopicJSON{MapID: m.ID, TopicID: 33, Topic: "Dragons", ChannelID: ch.ID, Channel: "Forum"}
	terrain := activeTopicJSON{MapID: m.ID, TopicID: 44, Topic: "Terrain", ChannelID: ch.ID, Channel: "Forum"}
	if got, want := status(), []activeTopicJSON{dragons, terrain}; fmt.Sprint(got) != fmt.Sprint(want) || st.Running.TopicID != 33 {
		t.Fatalf("topics in progress = %+v, want %+v", got, want)
	}
	type answer struct {
		Status   int
		Location string
		Dragons  bool // fetching on
		Terrain  bool
		Listed   []activeTopicJSON
	}
	form := func(topic int64, page bool) url.Values {
		v := url.Values{"account_channel_map_id": {fmt.Sprint(m.ID)}, "topic_id": {fmt.Sprint(topic)}}
		if page {
			v.Set("from", "page")
		}
		return v
	}
	for _, tt := range []struct {
		name string
		form url.Values
		want answer
	}{
		{"no topic named", url.Values{}, answer{409, "", true, true, []activeTopicJSON{dragons, terrain}}},
		{"not in progress, from the panel", form(55, true), answer{303, "/admin/messenger?done=no-topic", true, true, []activeTopicJSON{dragons, terrain}}},
		{"the job's topic", form(44, false), answer{200, "", true, false, []activeTopicJSON{dragons}}},
		{"the cycle's topic, from the panel", form(33, true), answer{303, "/admin/messenger?done=topic-skipped", false, false, []activeTopicJSON{}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, _ := e.do(nil, "POST", "/api/ingestion/disable-active-topic", tt.form, c)
			on33, _ := e.db.IsTopicFetchEnabled(ctx, m.ID, 33)
			on44, _ := e.db.IsTopicFetchEnabled(ctx, m.ID, 44)
			got := answer{resp.StatusCode, resp.Header.Get("Location"), on33, on44, status()}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if _, body := e.do(nil, "GET", "/admin/messenger?done=no-topic", nil, c); !strings.Contains(body, "not being processed right now") {
		t.Error("the panel's page lacks the notice")
	}
}

// TestIngestionStatusListsFilesInFlight: the status carries each file in
// flight with its phase, part, bytes, rate and time left, from the
// progress its running job recorded; a new part starts its phase (and its
// rate) afresh, more bytes of the same part do not; a job that ended
// leaves the list.
func TestIngestionStatusListsFilesInFlight(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	run, err := e.db.CreateRun(ctx, hoard.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	// A download 10 s into its phase, 300 of 1024 MiB done, 100 MiB of
	// them before the phase began: 20 MiB/s, 36 s left.
	var download, upload int64
	for _, j := range []struct {
		id       *int64
		kind     string
		progress string
	}{
		{&download, "ingest_message", fmt.Sprintf(`{"run_id": %d, "file": "Mammoth Diorama.zip", "phase": "downloading", "bytes": %d,
			"total_bytes": %d, "start_bytes": %d, "phase_started_at": "2025-01-01T12:00:00Z", "updated_at": "2025-01-01T12:00:10Z"}`,
			run.ID, 300*mib, 1024*mib, 100*mib)},
		{&upload, "upload_part", `{}`},
	} {
		*j.id = storetest.Job(t, e.db, storetest.JobOpts{Kind: j.kind, Queue: "ingest", Metadata: `{"file_progress": ` + j.progress + `}`})
	}
	set := func(part int, bytes int64) {
		t.Helper()
		if err := e.db.SetJobFileProgress(ctx, upload, hoard.FileProgress{RunID: run.ID, File: "Big Pack.zip", Phase: hoard.PhaseUploading,
			Part: part, Parts: 4, Bytes: bytes, TotalBytes: 512 * mib}); err != nil {
			t.Fatal(err)
		}
	}
	var st struct {
		Files []fileJSON `json:"files"`
	}
	status := func() []fileJSON {
		t.Helper()
		_, body := e.do(nil, "GET", "/api/ingestion/status", nil, c)
		st.Files = nil
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		return st.Files
	}
	set(2, 0)
	started := status()[1].Since
	set(2, 64*mib)
	if got := status()[1]; got.Since != started || got.Bytes != 64*mib {
		t.Errorf("more bytes of part 2: %+v, want its phase still started at %s", got, started)
	}
	time.Sleep(1100 * time.Millisecond)
	set(3, 0)
	got := status()
	if got[1].Since == started {
		t.Errorf("part 3 kept part 2's start %s", started)
	}
	got[1].Since = ""
	want := []fileJSON{
		{File: "Mammoth Diorama.zip", Phase: "downloading", Bytes: 300 * mib, TotalBytes: 1024 * mib, BytesPerSec: 20 * mib, SecondsLeft: 36,
			Since: "2025-01-01T12:00:00Z"},
		{File: "Big Pack.zip", Phase: "uploading", Part: 3, Parts: 4, TotalBytes: 512 * mib},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("files in flight:\n got  %+v\n want %+v", got, want)
	}
	storetest.SetJobState(t, e.db, storetest.JobMatch{ID: download}, rivertype.JobStateCompleted)
	if got := status(); len(got) != 1 || got[0].File != "Big Pack.zip" {
		t.Errorf("after the download's job ended: %+v", got)
	}
}
