package messengertest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/hoard/hoard/messenger"
)

// TestTopicsPaged lists forums of more than a page of topics: the
// emulator orders them as the platform does (pinned first, then by last
// activity) and pages after the last topic of the previous page, and
// Account.Topics gets every topic once, in id order, one request a page.
func TestTopicsPaged(t *testing.T) {
	t.Parallel()
	base := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		topics int
		// activity returns topic i's post date, in minutes after base
		// (-1: no post); pinned reports whether topic i is pinned.
		activity func(i int) int
		pinned   func(i int) bool
		calls    int
	}{
		{name: "newest topics most active", topics: 150, activity: func(i int) int { return i }, calls: 2},
		{name: "activity interleaves creation", topics: 250, activity: func(i int) int { return i * 7919 % 250 }, calls: 3},
		{name: "idle topics and equal dates", topics: 230, activity: func(i int) int {
			if i%3 == 0 {
				return -1
			}
			return i % 4
		}, calls: 3},
		{name: "pinned topics among them", topics: 205, activity: func(i int) int { return (250 - i) * 3 % 211 },
			pinned: func(i int) bool { return i == 3 || i == 99 || i == 100 || i == 204 }, calls: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var topics []map[string]any
			want := []string{"General"}
			for i := range tc.topics {
				top := map[string]any{"title": fmt.Sprintf("Topic %03d", i)}
				if m := tc.activity(i); m >= 0 {
					top["posts"] = []any{map[string]any{"text": "post", "date": base.Add(time.Duration(m) * time.Minute).Format(time.RFC3339)}}
				}
				if tc.pinned != nil && tc.pinned(i) {
					top["pinned"] = true
				}
				topics = append(topics, top)
				want = append(want, fmt.Sprintf("Topic %03d", i))
			}
			env := forumEnv(t, topics)
			acc := env.Account(t, env.Config("account"))
			ctx := ctxT(t)
			ch, err := acc.ResolveChannel(ctx, mustRef(t, "@bigforum"))
			if err != nil {
				t.Fatal(err)
			}
			env.Emu.ResetCalls()
			got, err := acc.Topics(ctx, ch)
			if err != nil {
				t.Fatal(err)
			}
			titles := make([]string, len(got))
			for i, tp := range got {
				titles[i] = tp.Title
				if i > 0 && tp.ID <= got[i-1].ID {
					t.Fatalf("topics out of id order at %d: %+v", i, got[i-1:i+1])
				}
			}
			if !reflect.DeepEqual(titles, want) {
				t.Fatalf("got %d topics, want %d:\n got  %q\n want %q", len(titles), len(want), titles, want)
			}
			if got[0].ID != messenger.GeneralTopicID {
				t.Fatalf("General has id %d", got[0].ID)
			}
			if n := env.Emu.Calls("messages.getForumTopics"); n != tc.calls {
				t.Fatalf("getForumTopics calls = %d, want %d (a page each)", n, tc.calls)
			}
		})
	}
}

// forumEnv starts an emulator whose world has one forum, @bigforum, with
// topics (seed topic objects).
func forumEnv(t *testing.T, topics []map[string]any) *Env {
	t.Helper()
	dir := t.TempDir()
	seed, err := json.Marshal(map[string]any{"account": map[string]any{"phone": "+15550000001"},
		"channels": []any{map[string]any{"title": "Big Forum", "username": "bigforum", "forum": true, "joined": true, "topics": topics}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(path, seed, 0o644); err != nil {
		t.Fatal(err)
	}
	return StartIn(t, path, dir)
}
