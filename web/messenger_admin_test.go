package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

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

func TestIngestionStatusAndDisableActiveTopic(t *testing.T) {
	e := newEnv(t, func(d *Deps) { d.WorkerInterval = 3600e9 })
	ctx := context.Background()
	admin, _ := e.user(hoard.RoleAdmin)
	c := e.session(admin)
	_, body := e.do(nil, "GET", "/api/ingestion/status", nil, c)
	if !strings.Contains(body, `"running":null`) || !strings.Contains(body, `"interval_seconds":3600`) {
		t.Fatalf("idle status = %s", body)
	}
	if resp, _ := e.do(nil, "POST", "/api/ingestion/disable-active-topic", url.Values{}, c); resp.StatusCode != 409 {
		t.Fatalf("disable without a running run = %d", resp.StatusCode)
	}
	ch := &hoard.Channel{PlatformID: 7, Title: "Forum", Kind: hoard.ChannelSource, IsForum: true}
	_ = e.db.UpsertChannel(ctx, ch)
	acc, _ := e.db.CreateAccount(ctx, "+15550002")
	m, _ := e.db.UpsertChannelMap(ctx, acc.ID, ch.ID, 1, hoard.MapReader)
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
	_, body = e.do(nil, "GET", "/api/ingestion/status", nil, c)
	if !strings.Contains(body, `"current_topic_id":33`) || !strings.Contains(body, `"status":"COMPLETED"`) || !strings.Contains(body, `"next_cycle_at":null`) {
		t.Fatalf("running status = %s", body)
	}
	resp, body := e.do(nil, "POST", "/api/ingestion/disable-active-topic", url.Values{}, c)
	if resp.StatusCode != 200 || !strings.Contains(body, `"topic_id":33`) {
		t.Fatalf("disable = %d %s", resp.StatusCode, body)
	}
	if on, _ := e.db.IsTopicFetchEnabled(ctx, m.ID, 33); on {
		t.Fatal("the active topic was not disabled")
	}
}
