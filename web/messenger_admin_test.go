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

	"github.com/hoard/hoard"
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
	if !out.IsForum || len(out.Topics) != 2 || !out.Topics[0].IsGeneral || !out.Topics[1].FetchEnabled || out.Topics[1].LastScannedAt != nil {
		t.Fatalf("topics = %s", body)
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
	if _, err := e.db.Pool().Exec(ctx, `INSERT INTO river_job (kind, args, queue, state, max_attempts, priority, attempt, attempted_at)
		VALUES ('ingest_message', jsonb_build_object('map_id', $1::bigint, 'topic_id', 44, 'channel_id', $2::bigint, 'message_id', 9),
		'ingest', 'running', 5, 1, 1, now())`, m.ID, ch.ID); err != nil {
		t.Fatal(err)
	}
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
