package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

func TestSplitSettled(t *testing.T) {
	// set is a set by its message ids (the first is its first part),
	// unsettled when young; dups are re-posts.
	type set struct {
		ids   []int64
		dups  []int64
		young bool
		album int64 // the lowest id of a photo of its album, 0 for none
	}
	tests := []struct {
		name    string
		sets    []set
		start   int64   // a hold before any set's (a recent album photo)
		decided []int64 // first message ids
		held    []int64
		hold    int64
	}{
		{name: "nothing read"},
		{name: "everything settled", sets: []set{{ids: []int64{5}}, {ids: []int64{9, 10}}},
			decided: []int64{5, 9}},
		{name: "a young set holds itself and what follows", sets: []set{{ids: []int64{5}}, {ids: []int64{9, 10}, young: true}, {ids: []int64{12}}},
			decided: []int64{5}, held: []int64{9, 12}, hold: 9},
		// Deciding the first would leave its part 60 above the watermark,
		// for a resume to read again as a set of its own.
		{name: "a settled set reaching past a young one waits with it", sets: []set{{ids: []int64{10, 60}}, {ids: []int64{50}, young: true}},
			held: []int64{10, 50}, hold: 10},
		{name: "a re-post past a young set holds its set too", sets: []set{{ids: []int64{10}, dups: []int64{70}}, {ids: []int64{50}, young: true}},
			held: []int64{10, 50}, hold: 10},
		{name: "the photo of a held set's album holds the watermark before it", sets: []set{{ids: []int64{5}}, {ids: []int64{100}, young: true, album: 98}},
			decided: []int64{5}, held: []int64{100}, hold: 98},
		{name: "a chain of holds", sets: []set{{ids: []int64{10, 40}}, {ids: []int64{30, 60}}, {ids: []int64{50}, young: true}},
			held: []int64{10, 30, 50}, hold: 10},
		{name: "a recent album photo holds what follows it", sets: []set{{ids: []int64{5}}, {ids: []int64{20}}}, start: 12,
			decided: []int64{5}, held: []int64{20}, hold: 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sets []archive.Set
			young, floors := map[int64]bool{}, map[int64]int64{}
			for _, s := range tt.sets {
				var as archive.Set
				as.FirstMessageID = s.ids[0]
				for _, id := range s.ids {
					as.Parts = append(as.Parts, archive.Part{Message: archive.Message{ID: id}})
				}
				for _, id := range s.dups {
					as.Duplicates = append(as.Duplicates, archive.Message{ID: id})
				}
				young[as.FirstMessageID] = s.young
				floors[as.FirstMessageID] = as.FirstMessageID
				if s.album != 0 {
					floors[as.FirstMessageID] = s.album
				}
				sets = append(sets, as)
			}
			decided, held, hold := splitSettled(sets, func(s archive.Set) bool { return !young[s.FirstMessageID] },
				func(s archive.Set) int64 { return floors[s.FirstMessageID] }, tt.start)
			firsts := func(ss []archive.Set) []int64 {
				var ids []int64
				for _, s := range ss {
					ids = append(ids, s.FirstMessageID)
				}
				return ids
			}
			got := fmt.Sprint(firsts(decided), firsts(held), hold)
			if want := fmt.Sprint(tt.decided, tt.held, tt.hold); got != want {
				t.Fatalf("decided, held, hold = %s, want %s", got, want)
			}
		})
	}
}

// longWorld is a channel and a forum topic, each with a history of several
// pages, in one emulator: documents every 25 posts, a multi-part set on a
// page boundary, an album whose photo ends one page and whose archive
// starts the next, a cover photo matched by caption a page before its
// archive, a re-post of an archive three pages after it. Posts are a
// minute apart.
type longWorld struct {
	env  *messengertest.Env
	acc  messenger.Account
	peer messenger.Channel // the destination
	// sources are the plain channels ("channel": the long shelf,
	// "early": one whose archives are all in its first page) and the
	// forum ("topic").
	sources map[string]messenger.Channel
	topic   messenger.Topic // the forum's long topic
	// want is, per history, "file name|part ids|photo id" of each set the
	// scan must queue, sorted; last is the history's newest message id.
	want map[string][]string
	last map[string]int
	// messages is how many posts (not service messages) each history has;
	// reposts how many of its archives re-post an earlier one.
	messages, reposts map[string]int
}

// longPosts lays out n posts whose ids start at first: specials by post
// index, a small generated archive every 25th post, text otherwise. It
// returns the posts and the sets they make ("name|ids|photo").
func longPosts(first, n int, specials map[int]map[string]any, sets []string) ([]map[string]any, []string) {
	posts := make([]map[string]any, n)
	want := slices.Clone(sets)
	for i := range posts {
		switch p, ok := specials[i]; {
		case ok:
			posts[i] = p
		case i%25 == 10:
			name := fmt.Sprintf("Pack %03d.zip", i)
			posts[i] = map[string]any{"generate": map[string]any{"name": name, "size": 2048, "seed": first + i}}
			want = append(want, fmt.Sprintf("%s|[%d]|0", name, first+i))
		default:
			posts[i] = map[string]any{"text": fmt.Sprintf("post %d", i)}
		}
	}
	slices.Sort(want)
	return posts, want
}

func newLongWorld(t *testing.T) *longWorld {
	t.Helper()
	dir := t.TempDir()
	var img bytes.Buffer
	if err := jpeg.Encode(&img, image.NewRGBA(image.Rect(0, 0, 8, 8)), nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cover.jpg"), img.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	gen := func(name string, seed int) map[string]any {
		return map[string]any{"generate": map[string]any{"name": name, "size": 4096, "seed": seed}}
	}
	photo := func(caption string, album int) map[string]any {
		p := map[string]any{"photo": "cover.jpg", "caption": caption}
		if album != 0 {
			p["album"] = album
		}
		return p
	}
	inAlbum := func(p map[string]any, album int) map[string]any { p["album"] = album; return p }
	// The shelf's ids: 1 is the channel's creation, posts start at 2;
	// pages of 100 end at ids 100, 200, 300, 400.
	shelfPosts, shelfWant := longPosts(2, 430, map[int]map[string]any{
		97: gen("Boundary.part1.rar", 1), 98: gen("Boundary.part2.rar", 2), 99: gen("Boundary.part3.rar", 3),
		198: photo("", 7), 199: inAlbum(gen("Album Pack.zip", 4), 7),
		247: photo("Cover of the Far Pack", 0), 257: gen("Far Pack.zip", 5),
		298: gen("Split.zip.001", 6), 299: gen("Split.zip.002", 7),
		// A re-post of Pack 010.zip (post 10) three pages later.
		320: {"generate": map[string]any{"name": "Pack 010.zip", "size": 2048, "seed": 12}},
	}, []string{"Boundary.rar|[99 100 101]|0", "Album Pack.zip|[201]|200", "Far Pack.zip|[259]|249", "Split.zip|[300 301]|0"})
	// The topic's ids: 1 is the forum's creation (and General's root), 2
	// this topic's, posts start at 3; its pages end at ids 102 and 202.
	topicPosts, topicWant := longPosts(3, 250, map[int]map[string]any{
		98: gen("Topic Set.part1.rar", 8), 99: gen("Topic Set.part2.rar", 9), 100: gen("Topic Set.part3.rar", 10),
	}, []string{"Topic Set.rar|[101 102 103]|0"})
	// The early shelf: 250 posts, two archives in the first page only.
	earlyPosts := make([]map[string]any, 250)
	for i := range earlyPosts {
		earlyPosts[i] = map[string]any{"text": fmt.Sprintf("post %d", i)}
	}
	earlyPosts[10], earlyPosts[35] = gen("Early A.zip", 11), gen("Early B.zip", 12)
	earlyWant := []string{"Early A.zip|[12]|0", "Early B.zip|[37]|0"}
	seed := writeJSONSeed(t, dir, map[string]any{
		"account":     map[string]any{"phone": "+15550000001", "premium": false},
		"destination": map[string]any{"title": "Hoard Archive", "username": "hoardarchive"},
		"channels": []map[string]any{
			{"title": "Long Shelf", "username": "longshelf", "joined": true, "posts": shelfPosts},
			{"title": "Early Shelf", "username": "earlyshelf", "joined": true, "posts": earlyPosts},
			{"title": "Long Forum", "username": "longforum", "joined": true, "forum": true,
				"topics": []map[string]any{{"title": "Sculpts", "posts": topicPosts}}},
		},
	})
	env := messengertest.Start(t, seed)
	acc := env.Account(t, env.Config("account"))
	w := &longWorld{env: env, acc: acc, peer: resolveChannel(t, acc, "@hoardarchive"),
		sources: map[string]messenger.Channel{"channel": resolveChannel(t, acc, "@longshelf"),
			"early": resolveChannel(t, acc, "@earlyshelf"), "topic": resolveChannel(t, acc, "@longforum")},
		want: map[string][]string{"channel": shelfWant, "topic": topicWant, "early": earlyWant},
		last: map[string]int{"channel": 431, "early": 251}, messages: map[string]int{"channel": 430, "topic": 250, "early": 250},
		reposts: map[string]int{"channel": 1}}
	topics, err := acc.Topics(context.Background(), w.sources["topic"])
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range topics {
		if tp.Title == "Sculpts" {
			w.topic = tp
		}
	}
	if w.topic.ID != 2 || w.topic.TopMessageID != 252 {
		t.Fatalf("topic %+v: the world's ids moved; fix the wants", w.topic)
	}
	w.last["topic"] = w.topic.TopMessageID
	return w
}

// queuedSets lists "file name|part ids|photo id" of every ingest_message
// job in db's transaction, sorted.
func queuedSets(t *testing.T, db *store.DB) []string {
	t.Helper()
	var out []string
	for _, job := range storetest.Jobs(t, db, storetest.JobMatch{Kind: "ingest_message"}) {
		var args hoard.IngestMessageArgs
		if err := json.Unmarshal(job.RawArgs, &args); err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, p := range args.Parts {
			ids = append(ids, p.MessageID)
		}
		out = append(out, fmt.Sprintf("%s|%v|%d", args.FileName, ids, args.PhotoMessageID))
	}
	slices.Sort(out)
	return out
}

// TestScanReadsPagesAndResumes scans each long history in one go, and
// interrupted by flood waits longer than the inline one (the job snoozes)
// or by a failed request (the job fails): every run resumes at the
// committed watermark. Whatever the interruptions, every set is queued
// exactly once and whole, previews match across pages, the run counts
// every message once, and the history is read once.
func TestScanReadsPagesAndResumes(t *testing.T) {
	w := newLongWorld(t)
	ctx := context.Background()
	const completed, snoozed = rivertype.JobStateCompleted, rivertype.JobStateScheduled
	tests := []struct {
		name   string
		what   string // "channel", "early" or "topic"
		faults []emulator.Fault
		pages  int // of the history read in one go
		runs   []rivertype.JobState
		// repostQueued: an interruption came between the commit of
		// Pack 010.zip and its re-post's; the resumed attempt knows
		// only the watermark, so the re-post is queued, and its
		// ingest_message job finds the package by name and size (rule
		// c) before any download. Read in one attempt, it is a
		// duplicate at once, as within a page.
		repostQueued bool
	}{
		{name: "channel in one go", what: "channel", pages: 5, runs: []rivertype.JobState{completed}},
		{name: "channel, a long flood wait after two pages", what: "channel", pages: 5,
			faults: []emulator.Fault{{Method: "messages.getHistory", Error: "FLOOD_WAIT_60", After: 2, Times: 1}},
			runs:   []rivertype.JobState{snoozed, completed}, repostQueued: true},
		{name: "channel, flood waits after every page", what: "channel", pages: 5,
			// A fault counts the calls the faults before it let pass: these
			// fire on calls 2, 4, 6 and 8.
			faults: []emulator.Fault{{Method: "messages.getHistory", Error: "FLOOD_WAIT_45", After: 1, Times: 1},
				{Method: "messages.getHistory", Error: "FLOOD_WAIT_45", After: 2, Times: 1},
				{Method: "messages.getHistory", Error: "FLOOD_WAIT_45", After: 3, Times: 1},
				{Method: "messages.getHistory", Error: "FLOOD_WAIT_45", After: 4, Times: 1}},
			runs: []rivertype.JobState{snoozed, snoozed, snoozed, snoozed, completed}, repostQueued: true},
		{name: "channel, a failed request", what: "channel", pages: 5,
			faults: []emulator.Fault{{Method: "messages.getHistory", Error: "INTERNAL", After: 3, Times: 1}},
			runs:   []rivertype.JobState{rivertype.JobStateDiscarded, completed}, repostQueued: true},
		// The run that finishes finds nothing: what the pages before the
		// flood wait queued still makes the scan one that found archives.
		{name: "early archives, a long flood wait after two pages", what: "early", pages: 3,
			faults: []emulator.Fault{{Method: "messages.getHistory", Error: "FLOOD_WAIT_60", After: 2, Times: 1}},
			runs:   []rivertype.JobState{snoozed, completed}},
		{name: "topic in one go", what: "topic", pages: 3, runs: []rivertype.JobState{completed}},
		{name: "topic, a long flood wait after the first page", what: "topic", pages: 3,
			faults: []emulator.Fault{{Method: "messages.getReplies", Error: "FLOOD_WAIT_30", After: 1, Times: 1}},
			runs:   []rivertype.JobState{snoozed, completed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, _ := destinationDB(t, w.env.Info.Phone, w.peer)
			account, err := db.FindAccountByPhone(ctx, w.env.Info.Phone)
			if err != nil {
				t.Fatal(err)
			}
			src := w.sources[tt.what]
			ch := &hoard.Channel{PlatformID: src.ID, Title: src.Title, Username: src.Username, Kind: hoard.ChannelSource,
				IsActive: true, IsForum: src.Forum}
			if err := db.UpsertChannel(ctx, ch); err != nil {
				t.Fatal(err)
			}
			m, err := db.UpsertChannelMap(ctx, account.ID, ch.ID, src.AccessHash, hoard.MapReader)
			if err != nil {
				t.Fatal(err)
			}
			run, err := db.CreateRun(ctx, hoard.TriggerManual)
			if err != nil {
				t.Fatal(err)
			}
			deps := Deps{DB: db, Logger: discardLogger(), Accounts: oneAccount{w.acc}, SpoolDir: t.TempDir(),
				MaxSkipAttempts: 3, SettleTime: 10 * time.Minute, WorkerInterval: time.Hour, Now: time.Now}
			work := func() rivertype.JobState {
				if tt.what != "topic" {
					return runJobIn(t, db, river.Worker[hoard.ScanChannelArgs](newScanChannelWorker(newParts(deps))),
						hoard.ScanChannelArgs{RunID: run.ID, MapID: m.ID})
				}
				return runJobIn(t, db, river.Worker[hoard.ScanTopicArgs](newScanTopicWorker(newParts(deps))),
					hoard.ScanTopicArgs{RunID: run.ID, MapID: m.ID, TopicID: int64(w.topic.ID), TopMessageID: int64(w.topic.TopMessageID)})
			}
			if tt.what == "topic" {
				if _, err := db.UpsertTopic(ctx, m.ID, int64(w.topic.ID), w.topic.Title, false); err != nil {
					t.Fatal(err)
				}
			}
			method := "messages.getHistory"
			if tt.what == "topic" {
				method = "messages.getReplies"
			}
			w.env.Emu.ClearFaults()
			for _, f := range tt.faults {
				w.env.Emu.InjectFault(f)
			}
			before := w.env.Emu.Calls(method)
			var states []rivertype.JobState
			for len(states) < 10 {
				st := work()
				states = append(states, st)
				if st == rivertype.JobStateCompleted {
					break
				}
			}
			calls := w.env.Emu.Calls(method) - before - len(tt.faults)
			if !slices.Equal(states, tt.runs) {
				t.Fatalf("runs ended %v, want %v", states, tt.runs)
			}
			wantSets, dups := w.want[tt.what], w.reposts[tt.what]
			if tt.repostQueued {
				wantSets, dups = append(slices.Clone(wantSets), "Pack 010.zip|[322]|0"), 0
				slices.Sort(wantSets)
			}
			if got := queuedSets(t, db); !slices.Equal(got, wantSets) {
				t.Errorf("queued sets\n got  %q\n want %q", got, wantSets)
			}
			mark, state := int64(0), hoard.ScanState{}
			if tt.what != "topic" {
				got, err := db.FindChannelMap(ctx, m.ID)
				if err != nil {
					t.Fatal(err)
				}
				mark, state = got.LastProcessedMessageID, got.ScanState
			} else {
				got, err := db.FindTopic(ctx, m.ID, int64(w.topic.ID))
				if err != nil {
					t.Fatal(err)
				}
				mark, state = got.LastProcessedMessageID, got.ScanState
			}
			got, err := db.FindRun(ctx, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			type outcome struct {
				Mark                                int64
				Found, Partial                      bool
				Scanned, Archives, Duplicates, Held int
			}
			want := outcome{Mark: int64(w.last[tt.what]), Found: true, Scanned: w.messages[tt.what],
				Archives: len(w.want[tt.what]) + w.reposts[tt.what], Duplicates: dups}
			if o := (outcome{mark, state.LastScanFoundArchives, state.PartialScanFound, got.MessagesScanned, got.ArchivesFound,
				got.Duplicates, got.HeldBack}); o != want {
				t.Errorf("watermark, scan state and run counters\n got  %+v\n want %+v", o, want)
			}
			// A resume starts at the watermark: it reads again only the
			// sets the last commit held back, a few messages that here
			// never cost a page more.
			if calls != tt.pages {
				t.Errorf("%d history pages read for %d pages and %d interruptions: a resume read committed pages again", calls, tt.pages, len(tt.faults))
			}
		})
	}
}

func TestAlbumFloor(t *testing.T) {
	s := &historyScan{
		mark: 90,
		byID: map[int64]messenger.Message{100: {ID: 100, GroupedID: 7}, 200: {ID: 200}, 300: {ID: 300, GroupedID: 9},
			400: {ID: 400, GroupedID: 5}},
		photos: []archive.Photo{{ID: 80, AlbumID: 5}, {ID: 95, AlbumID: 7}, {ID: 97, AlbumID: 8}, {ID: 105, AlbumID: 7},
			{ID: 150}, {ID: 401, AlbumID: 5}},
	}
	tests := []struct {
		name  string
		first int64
		want  int64
	}{
		{"its album's first photo", 100, 95},
		{"no album", 200, 200},
		{"an album without photos read", 300, 300},
		{"a photo below the watermark does not count", 400, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.albumFloor(archive.Set{FirstMessageID: tt.first}); got != tt.want {
				t.Fatalf("albumFloor = %d, want %d", got, tt.want)
			}
		})
	}
}
