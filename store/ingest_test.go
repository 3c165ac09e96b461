package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// indexDraft returns a package as verify indexes it: published to dest, from
// message msg of channel src (0 = a manual upload), with a unique name and
// hash.
func indexDraft(src, dest, msg int64) *hoard.Package {
	n := seq.Add(1)
	p := &hoard.Package{
		FileName:       fmt.Sprintf("Indexed %d.zip", n),
		FileSize:       5000 + n,
		ArchiveType:    hoard.ArchiveZIP,
		ContentHash:    newHash(),
		PartCount:      1,
		Creator:        "New Creator",
		Tags:           []string{"new"},
		DestChannelID:  dest,
		DestMessageID:  900 + n,
		DestMessageIDs: []int64{900 + n},
		InspectionNote: "2 entries",
	}
	if src != 0 {
		p.SourceChannelID, p.SourceMessageID, p.SourceMessageIDs = src, msg, []int64{msg}
		p.RemoteUniqueID = fmt.Sprintf("remote-%d", n)
	}
	return p
}

var indexFiles = []hoard.PackageFile{{Path: "models/dragon.stl", Size: 100, CompressedSize: 60}, {Path: "readme.txt", Size: 5}}

func TestIndexPackage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const msg = 10
	tests := []struct {
		name string
		// existing stores the row present before p is indexed (nil: none).
		existing    func(t *testing.T, db *store.DB, p *hoard.Package) *hoard.Package
		wantCode    string
		wantCreated bool
		// check looks at the indexed row (got) and the one before (old).
		check func(t *testing.T, got, old *hoard.Package)
	}{
		{
			name:        "new package",
			wantCreated: true,
			check: func(t *testing.T, got, _ *hoard.Package) {
				if got.Creator != "New Creator" || !slices.Equal(got.Tags, []string{"new"}) || got.PackageGroupID != 0 {
					t.Errorf("new package = %+v", got)
				}
			},
		},
		{
			name: "repair of the same source message keeps id, group, tags and creator",
			existing: func(t *testing.T, db *store.DB, p *hoard.Package) *hoard.Package {
				g := &hoard.PackageGroup{Name: "Kept group", GroupingSource: hoard.GroupManual}
				must(t, db.CreateGroup(context.Background(), g))
				old := mustPackage(t, db, func(o *hoard.Package) {
					o.SourceChannelID, o.SourceMessageID, o.SourceMessageIDs = p.SourceChannelID, p.SourceMessageID, []int64{p.SourceMessageID}
					o.Creator, o.Tags, o.PackageGroupID = "Old Creator", []string{"kept", "Fantasy"}, g.ID
				})
				must(t, db.ReplacePackageFiles(context.Background(), old.ID, []hoard.PackageFile{{Path: "old/a"}, {Path: "old/b"}, {Path: "old/c"}}))
				return old
			},
			check: func(t *testing.T, got, old *hoard.Package) {
				if got.Creator != "Old Creator" || !slices.Equal(got.Tags, []string{"kept", "Fantasy"}) || got.PackageGroupID != old.PackageGroupID ||
					!got.CreatedAt.Equal(old.CreatedAt) {
					t.Errorf("repaired package lost what it had: %+v", got)
				}
			},
		},
		{
			name: "repair without a creator takes the new one",
			existing: func(t *testing.T, db *store.DB, p *hoard.Package) *hoard.Package {
				return mustPackage(t, db, func(o *hoard.Package) {
					o.SourceChannelID, o.SourceMessageID = p.SourceChannelID, p.SourceMessageID
				})
			},
			check: func(t *testing.T, got, _ *hoard.Package) {
				if got.Creator != "New Creator" || len(got.Tags) != 0 {
					t.Errorf("repaired package = %+v", got)
				}
			},
		},
		{
			name: "unpublished row with the same content hash is completed",
			existing: func(t *testing.T, db *store.DB, p *hoard.Package) *hoard.Package {
				return mustPackage(t, db, func(o *hoard.Package) { o.ContentHash, o.Tags = p.ContentHash, []string{"kept"} })
			},
			check: func(t *testing.T, got, _ *hoard.Package) {
				if !slices.Equal(got.Tags, []string{"kept"}) {
					t.Errorf("completed package = %+v", got)
				}
			},
		},
		{
			name: "content hash already published",
			existing: func(t *testing.T, db *store.DB, p *hoard.Package) *hoard.Package {
				return mustPackage(t, db, func(o *hoard.Package) {
					o.ContentHash, o.DestChannelID, o.DestMessageID, o.DestMessageIDs = p.ContentHash, p.DestChannelID, 1, []int64{1}
				})
			},
			wantCode: hoard.ECONFLICT,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := storetest.NewTx(t)
			src := mustChannel(t, db)
			dest := mustChannel(t, db, destChannel)
			mustSkipped(t, db, src.ID, msg)
			mustSkipped(t, db, src.ID, msg+1)
			p := indexDraft(src.ID, dest.ID, msg)
			var old *hoard.Package
			if tt.existing != nil {
				old = tt.existing(t, db, p)
			}
			before := countRows(t, db, "packages")

			created, err := db.IndexPackage(ctx, p, indexFiles)
			if tt.wantCode != "" {
				wantCode(t, err, tt.wantCode)
				if n := countRows(t, db, "packages"); n != before {
					t.Fatalf("packages: %d, want %d", n, before)
				}
				_, err = db.FindSkippedBySource(ctx, src.ID, msg)
				must(t, err) // the skipped record stays for the duplicate handling
				if got, _ := db.FindPackageByID(ctx, old.ID); got.FileName != old.FileName || got.FileCount != old.FileCount {
					t.Fatalf("published package changed: %+v", got)
				}
				return
			}
			must(t, err)
			if created != tt.wantCreated {
				t.Fatalf("created = %v, want %v", created, tt.wantCreated)
			}
			wantRows := before
			if tt.wantCreated {
				wantRows++
			} else if p.ID != old.ID {
				t.Fatalf("repair indexed package %d, want %d in place", p.ID, old.ID)
			}
			if n := countRows(t, db, "packages"); n != wantRows {
				t.Fatalf("packages: %d, want %d", n, wantRows)
			}
			got, err := db.FindPackageByID(ctx, p.ID)
			must(t, err)
			want := *p
			want.SourceChannelID, want.SourceMessageID, want.SourceMessageIDs = src.ID, msg, []int64{msg}
			want.DestChannelID, want.InspectionNote, want.FileCount = dest.ID, "2 entries", 2
			if diff := cmp.Diff(want, *got, cmpopts.IgnoreFields(hoard.Package{}, "ID", "ArchiveType", "PartCount", "Creator", "Tags",
				"SourceTopicID", "SourceCaption", "SourcePostedAt", "ReplyToMessageID", "MediaAlbumID", "PreviewData", "PreviewMsgID",
				"HasPreview", "PackageGroupID", "IngestionRunID", "CreatedAt", "UpdatedAt"), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("indexed package (-want +got):\n%s", diff)
			}
			files, err := db.ListPackageFiles(ctx, p.ID, -1, 10, "")
			must(t, err)
			if len(files) != 2 || files[0].Path != "models/dragon.stl" || files[0].Extension != "stl" || files[1].FileName != "readme.txt" {
				t.Fatalf("files = %+v", files)
			}
			tt.check(t, got, old)
			_, err = db.FindSkippedBySource(ctx, src.ID, msg)
			wantCode(t, err, hoard.ENOTFOUND)
			_, err = db.FindSkippedBySource(ctx, src.ID, msg+1)
			must(t, err) // another message's record stays
		})
	}
}

// TestIndexPackageNotifies listens on a separate connection: new_package is
// delivered on commit, only for a new package, never after a rollback.
func TestIndexPackageNotifies(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := storetest.URL(t)
	db, err := store.Open(ctx, url, store.Options{})
	must(t, err)
	defer db.Close()
	conn, err := pgx.Connect(ctx, url)
	must(t, err)
	_, err = conn.Exec(ctx, "LISTEN new_package")
	must(t, err)
	notes := make(chan *pgconn.Notification, 10)
	listening := make(chan struct{})
	// The listener ends before the connection closes: a pgx connection is
	// not safe for concurrent use.
	defer func() {
		cancel()
		<-listening
		conn.Close(context.Background())
	}()
	go func() {
		defer close(listening)
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				close(notes)
				return
			}
			notes <- n
		}
	}()
	// Sure no notification: the listener gets one within milliseconds.
	wantNone := func(what string) {
		t.Helper()
		select {
		case n := <-notes:
			t.Fatalf("%s: notification %+v", what, n)
		case <-time.After(300 * time.Millisecond):
		}
	}

	src := mustChannel(t, db)
	dest := mustChannel(t, db, destChannel)

	rolledBack := indexDraft(src.ID, dest.ID, 1)
	err = db.InTx(ctx, func(tx *store.DB) error {
		if _, err := tx.IndexPackage(ctx, rolledBack, indexFiles); err != nil {
			return err
		}
		return fmt.Errorf("job failed")
	})
	if err == nil {
		t.Fatal("rolled-back transaction committed")
	}
	wantNone("rolled back")

	repair := mustPackage(t, db, func(o *hoard.Package) { o.SourceChannelID, o.SourceMessageID = src.ID, 2 })
	p := indexDraft(src.ID, dest.ID, 2)
	must(t, db.InTx(ctx, func(tx *store.DB) error {
		created, err := tx.IndexPackage(ctx, p, indexFiles)
		if created || p.ID != repair.ID {
			t.Errorf("repair: created = %v, id %d, want %d", created, p.ID, repair.ID)
		}
		return err
	}))
	wantNone("repair")

	for _, tt := range []struct {
		name string
		src  int64
		want string
	}{
		{"source package", src.ID, `{"package_id":%d,"channel_id":%d}`},
		{"manual upload", 0, `{"package_id":%d}`},
	} {
		p := indexDraft(tt.src, dest.ID, 3)
		must(t, db.InTx(ctx, func(tx *store.DB) error {
			created, err := tx.IndexPackage(ctx, p, indexFiles)
			if err == nil && !created {
				t.Errorf("%s: not created", tt.name)
			}
			wantNone(tt.name + " before commit")
			return err
		}))
		select {
		case n := <-notes:
			want := fmt.Sprintf(tt.want, p.ID)
			if tt.src != 0 {
				want = fmt.Sprintf(tt.want, p.ID, tt.src)
			}
			if n.Channel != "new_package" || n.Payload != want {
				t.Fatalf("%s: notification %s %s, want %s", tt.name, n.Channel, n.Payload, want)
			}
			var ev store.NewPackageEvent
			must(t, json.Unmarshal([]byte(n.Payload), &ev))
			if ev.PackageID != p.ID || ev.ChannelID != tt.src {
				t.Fatalf("%s: event = %+v", tt.name, ev)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no notification after commit", tt.name)
		}
		wantNone(tt.name + " twice")
	}
}

func TestFindIngestDuplicate(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch := mustChannel(t, db)
	other := mustChannel(t, db)
	dest := mustChannel(t, db, destChannel)
	published := func(p *hoard.Package) { p.DestChannelID, p.DestMessageID, p.DestMessageIDs = dest.ID, 1, []int64{1} }

	a := mustPackage(t, db, published, func(p *hoard.Package) {
		p.SourceChannelID, p.SourceMessageID, p.SourceMessageIDs = ch.ID, 100, []int64{100, 101, 102}
		p.RemoteUniqueID, p.FileName, p.FileSize = "rid-A", "A.zip", 1000
	})
	unpublished := mustPackage(t, db, func(p *hoard.Package) {
		p.SourceChannelID, p.SourceMessageID, p.SourceMessageIDs = ch.ID, 200, []int64{200}
		p.RemoteUniqueID, p.FileName, p.FileSize = "rid-U", "U.zip", 2000
	})
	o := mustPackage(t, db, published, func(p *hoard.Package) {
		p.SourceChannelID, p.SourceMessageID, p.SourceMessageIDs = other.ID, 300, []int64{300}
		p.RemoteUniqueID, p.FileName, p.FileSize = "rid-O", "O.zip", 3000
	})

	tests := []struct {
		name      string
		channel   int64
		remoteIDs []string
		messages  []int64
		fileName  string
		size      int64
		want      *hoard.Package
		wantRule  string
	}{
		{"(a) remote id in the channel", ch.ID, []string{"x", "rid-A"}, []int64{999}, "new.zip", 1, a, store.DupRemoteUniqueID},
		{"(a) remote id of another channel", ch.ID, []string{"rid-O"}, []int64{999}, "new.zip", 1, nil, ""},
		{"(a) in the other channel", other.ID, []string{"rid-O"}, nil, "new.zip", 1, o, store.DupRemoteUniqueID},
		{"(b) first source message", ch.ID, nil, []int64{100}, "new.zip", 1, a, store.DupSourceMessage},
		{"(b) another part's message", ch.ID, []string{"x"}, []int64{555, 102}, "new.zip", 1, a, store.DupSourceMessage},
		{"(b) same message id in another channel", other.ID, nil, []int64{100, 101}, "new.zip", 1, nil, ""},
		{"(c) name and size from any channel", mustChannel(t, db).ID, []string{"y"}, []int64{7}, "A.zip", 1000, a, store.DupNameAndSize},
		{"(c) same name, other size", ch.ID, nil, nil, "A.zip", 1001, nil, ""},
		{"(c) same size, other name", ch.ID, nil, nil, "a.zip", 1000, nil, ""},
		{"only published packages count", ch.ID, []string{"rid-U"}, []int64{200}, "U.zip", 2000, nil, ""},
		{"(a) before (b) and (c)", ch.ID, []string{"rid-A"}, []int64{300}, "O.zip", 3000, a, store.DupRemoteUniqueID},
		{"(b) before (c)", ch.ID, nil, []int64{101}, "O.zip", 3000, a, store.DupSourceMessage},
		{"nothing given", ch.ID, nil, nil, "", 0, nil, ""},
	}
	for _, tt := range tests {
		got, rule, err := db.FindIngestDuplicate(ctx, tt.channel, tt.remoteIDs, tt.messages, tt.fileName, tt.size)
		if tt.want == nil {
			if hoard.ErrorCode(err) != hoard.ENOTFOUND {
				t.Errorf("%s: got %v, %q, %v; want not found", tt.name, got, rule, err)
			}
			continue
		}
		if err != nil || got.ID != tt.want.ID || rule != tt.wantRule {
			t.Errorf("%s: got %v, %q, %v; want package %d by %q", tt.name, got, rule, err, tt.want.ID, tt.wantRule)
		}
	}

	// (d) the content hash, after the download: published packages only.
	got, err := db.FindPublishedByContentHash(ctx, a.ContentHash)
	if err != nil || got.ID != a.ID {
		t.Fatalf("FindPublishedByContentHash = %v, %v; want %d", got, err, a.ID)
	}
	for _, hash := range []string{unpublished.ContentHash, newHash()} {
		_, err = db.FindPublishedByContentHash(ctx, hash)
		wantCode(t, err, hoard.ENOTFOUND)
	}
}

func TestRewindTopicWatermark(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	m := mustMap(t, db, mustAccount(t, db).ID, mustChannel(t, db, func(c *hoard.Channel) { c.IsForum = true }).ID)
	for _, topic := range []int64{7, 8} {
		_, err := db.UpsertTopic(ctx, m.ID, topic, fmt.Sprintf("Topic %d", topic), false)
		must(t, err)
		must(t, db.AdvanceTopicWatermark(ctx, m.ID, topic, 100))
	}
	watermark := func(topic int64) int64 {
		t.Helper()
		tp, err := db.FindTopic(ctx, m.ID, topic)
		must(t, err)
		return tp.LastProcessedMessageID
	}
	// Steps run in order: each starts from the one before.
	steps := []struct {
		message int64
		want    int64
	}{
		{50, 49},
		{80, 49}, // never forward
		{49, 48},
		{1, 0},
		{0, 0}, // never below 0
	}
	for _, s := range steps {
		must(t, db.RewindTopicWatermark(ctx, m.ID, 7, s.message))
		if got := watermark(7); got != s.want {
			t.Fatalf("rewind to %d: watermark = %d, want %d", s.message, got, s.want)
		}
	}
	if got := watermark(8); got != 100 {
		t.Fatalf("another topic moved: %d", got)
	}
	must(t, db.RewindTopicWatermark(ctx, m.ID, 99, 5)) // no such topic: nothing to do
}

// TestStartRunForJob uses a database of its own: a RUNNING run in a shared
// database's open transaction would make other tests' runs wait.
func TestStartRunForJob(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	ctx := context.Background()

	_, err := db.FindRunByJob(ctx, 1001)
	wantCode(t, err, hoard.ENOTFOUND)
	first, created, err := db.StartRunForJob(ctx, hoard.TriggerSchedule, 1001)
	must(t, err)
	if !created || first.Status != hoard.RunRunning || first.Trigger != hoard.TriggerSchedule || first.FinishedAt != nil {
		t.Fatalf("first run = %+v, created %v", first, created)
	}
	// A retried cycle job keeps its run.
	again, created, err := db.StartRunForJob(ctx, hoard.TriggerManual, 1001)
	must(t, err)
	if created || again.ID != first.ID || again.Status != hoard.RunRunning || again.Trigger != hoard.TriggerSchedule {
		t.Fatalf("second start of job 1001 = %+v, created %v; want run %d", again, created, first.ID)
	}
	found, err := db.FindRunByJob(ctx, 1001)
	must(t, err)
	if found.ID != first.ID {
		t.Fatalf("FindRunByJob = %d, want %d", found.ID, first.ID)
	}

	// Another job: the first job's RUNNING run can no longer finish.
	second, created, err := db.StartRunForJob(ctx, hoard.TriggerManual, 2002)
	must(t, err)
	if !created || second.ID == first.ID || second.Status != hoard.RunRunning || second.Trigger != hoard.TriggerManual {
		t.Fatalf("run of job 2002 = %+v, created %v", second, created)
	}
	stale, err := db.FindRun(ctx, first.ID)
	must(t, err)
	if stale.Status != hoard.RunFailed || stale.FinishedAt == nil || stale.ErrorMessage == "" {
		t.Fatalf("stale run = %+v", stale)
	}

	// A RUNNING run without a job (an older cycle) is stale too.
	_, err = db.FinishRun(ctx, second.ID, hoard.RunCompleted, "")
	must(t, err)
	legacy, err := db.CreateRun(ctx, hoard.TriggerManual)
	must(t, err)
	third, created, err := db.StartRunForJob(ctx, hoard.TriggerSchedule, 3003)
	must(t, err)
	if !created {
		t.Fatal("job 3003 got no new run")
	}
	if got, _ := db.FindRun(ctx, legacy.ID); got.Status != hoard.RunFailed {
		t.Fatalf("run without a job = %+v", got)
	}
	if got, _ := db.FindRun(ctx, second.ID); got.Status != hoard.RunCompleted || got.ErrorMessage != "" {
		t.Fatalf("a finished run was touched: %+v", got)
	}

	// A job whose run is final gets that run back and fails no other.
	back, created, err := db.StartRunForJob(ctx, hoard.TriggerSchedule, 1001)
	must(t, err)
	if created || back.ID != first.ID || back.Status != hoard.RunFailed {
		t.Fatalf("restart of job 1001 = %+v, created %v", back, created)
	}
	if got, _ := db.FindRun(ctx, third.ID); got.Status != hoard.RunRunning {
		t.Fatalf("the running run was failed: %+v", got)
	}
}

// TestClaimPackageSource claims a package's source for other posts of its
// content in several orders: the package always ends with the earliest
// post (date, then channel, then message) and its category tag, whatever
// the order; later posts change nothing; a manual upload keeps its own.
func TestClaimPackageSource(t *testing.T) {
	jan := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)
	type got struct {
		ChannelIdx int // index into the channels; -1: none
		MessageID  int64
		FileName   string
		Creator    string
		Tags       []string
		PostedAt   time.Time
		Swaps      []bool
	}
	// Posts by channel index: 0 "STL", 1 "Fantasy", 2 no category.
	type post struct {
		ch   int
		msg  int64
		days int
	}
	tests := []struct {
		name   string
		first  post // the package's own source; ch -1: a manual upload
		claims []post
		want   got
	}{
		{"an earlier post takes over", post{0, 10, 30}, []post{{1, 20, 0}},
			got{1, 20, "post 1-20.zip", "Creator 1", []string{"Fantasy", "mine"}, jan, []bool{true}}},
		{"a later post is a duplicate", post{0, 10, 0}, []post{{1, 20, 30}},
			got{0, 10, "post 0-10.zip", "Creator 0", []string{"STL", "mine"}, jan, []bool{false}}},
		{"same date: the smaller channel id", post{1, 5, 0}, []post{{2, 1, 0}, {0, 9, 0}},
			got{0, 9, "post 0-9.zip", "Creator 0", []string{"STL", "mine"}, jan, []bool{false, true}}},
		{"same date and channel: the smaller message", post{2, 9, 0}, []post{{2, 3, 0}},
			got{2, 3, "post 2-3.zip", "Creator 2", []string{"mine"}, jan, []bool{true}}},
		{"claims in one order", post{0, 1, 30}, []post{{1, 1, 20}, {2, 1, 10}, {0, 2, 5}},
			got{0, 2, "post 0-2.zip", "Creator 0", []string{"STL", "mine"}, jan.AddDate(0, 0, 5), []bool{true, true, true}}},
		{"the same claims in another", post{0, 1, 30}, []post{{0, 2, 5}, {2, 1, 10}, {1, 1, 20}},
			got{0, 2, "post 0-2.zip", "Creator 0", []string{"STL", "mine"}, jan.AddDate(0, 0, 5), []bool{true, false, false}}},
		{"a manual upload keeps its own", post{-1, 0, 0}, []post{{1, 20, 0}},
			got{-1, 0, "upload.zip", "Uploader", []string{"mine"}, time.Time{}, []bool{false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := storetest.NewTx(t)
			ctx := context.Background()
			var channels []int64
			for i, cat := range []string{"STL", "Fantasy", ""} {
				ch := &hoard.Channel{PlatformID: int64(7000 + i), Title: fmt.Sprintf("Channel %d", i), Kind: hoard.ChannelSource, Category: cat}
				if err := db.UpsertChannel(ctx, ch); err != nil {
					t.Fatal(err)
				}
				channels = append(channels, ch.ID)
			}
			source := func(p post) hoard.PackageSource {
				cats := []string{"STL", "Fantasy", ""}
				return hoard.PackageSource{ChannelID: channels[p.ch], MessageID: p.msg, MessageIDs: []int64{p.msg},
					PostedAt: jan.AddDate(0, 0, p.days), FileName: fmt.Sprintf("post %d-%d.zip", p.ch, p.msg),
					Creator: fmt.Sprintf("Creator %d", p.ch), Tag: cats[p.ch], Caption: "caption"}
			}
			pkg := &hoard.Package{FileName: "upload.zip", FileSize: 100, ArchiveType: hoard.ArchiveZIP, ContentHash: newHash(),
				Creator: "Uploader", Tags: []string{"mine"}, DestChannelID: channels[2], DestMessageID: 5, DestMessageIDs: []int64{5}}
			if tt.first.ch >= 0 {
				s := source(tt.first)
				pkg.SetSource(s)
				if s.Tag != "" {
					pkg.Tags = []string{s.Tag, "mine"}
				}
			}
			if err := db.CreatePackage(ctx, pkg); err != nil {
				t.Fatal(err)
			}
			var g got
			for _, c := range tt.claims {
				swapped, err := db.ClaimPackageSource(ctx, pkg.ID, source(c))
				if err != nil {
					t.Fatal(err)
				}
				g.Swaps = append(g.Swaps, swapped)
			}
			p, err := db.FindPackageByID(ctx, pkg.ID)
			if err != nil {
				t.Fatal(err)
			}
			g.ChannelIdx = slices.Index(channels, p.SourceChannelID)
			g.MessageID, g.FileName, g.Creator, g.Tags = p.SourceMessageID, p.FileName, p.Creator, p.Tags
			if !p.SourcePostedAt.IsZero() && p.SourcePostedAt.Year() > 1 {
				g.PostedAt = p.SourcePostedAt.UTC()
			}
			if !reflect.DeepEqual(g, tt.want) {
				t.Errorf("after the claims:\n got  %+v\n want %+v", g, tt.want)
			}
		})
	}
	t.Run("a package that is gone", func(t *testing.T) {
		db := storetest.NewTx(t)
		_, err := db.ClaimPackageSource(context.Background(), 424242, hoard.PackageSource{ChannelID: 1, PostedAt: jan})
		if hoard.ErrorCode(err) != hoard.ENOTFOUND {
			t.Fatalf("err = %v, want ENOTFOUND", err)
		}
	})
}

// TestClaimTransferSource: an earlier post claims the draft of the
// publication in flight of its bytes, and FindTransferForUpdate returns the
// draft as claimed; a later post, a post of the transfer's own source and
// bytes nobody publishes change nothing.
func TestClaimTransferSource(t *testing.T) {
	db := storetest.NewTx(t)
	ctx := context.Background()
	acc, err := db.CreateAccount(ctx, "+15550002222")
	if err != nil {
		t.Fatal(err)
	}
	var chans []int64
	for i, cat := range []string{"STL", "Fantasy"} {
		ch := &hoard.Channel{PlatformID: int64(8000 + i), Title: fmt.Sprintf("Channel %d", i), Kind: hoard.ChannelSource, Category: cat}
		if err := db.UpsertChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
		chans = append(chans, ch.ID)
	}
	feb := time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)
	hash := newHash()
	draft := hoard.Package{FileName: "Dragon.zip", FileSize: 10, ArchiveType: hoard.ArchiveZIP, ContentHash: hash, Tags: []string{"STL"}}
	draft.SetSource(hoard.PackageSource{ChannelID: chans[0], MessageID: 5, MessageIDs: []int64{5}, PostedAt: feb, FileName: "Dragon.zip", Creator: "Channel 0"})
	tr := &hoard.Transfer{SourceChannelID: chans[0], SourceMessageID: 5, AccountID: acc.ID, DestChannelID: chans[0],
		ContentHash: hash, Draft: draft, SpoolPaths: []string{"/spool/part-000"}}
	if err := db.CreateTransfer(ctx, tr, []hoard.TransferPart{{Name: "Dragon.zip", Length: 10}}); err != nil {
		t.Fatal(err)
	}
	post := func(ch int, msg int64, at time.Time) hoard.PackageSource {
		return hoard.PackageSource{ChannelID: chans[ch], MessageID: msg, MessageIDs: []int64{msg}, PostedAt: at,
			FileName: fmt.Sprintf("copy %d.zip", msg), Creator: fmt.Sprintf("Channel %d", ch), Tag: []string{"STL", "Fantasy"}[ch]}
	}
	type state struct {
		Swapped   bool
		Code      string
		ChannelID int64
		MessageID int64
		FileName  string
		Tags      []string
	}
	steps := []struct {
		name string
		hash string
		post hoard.PackageSource
		want state
	}{
		{"a later post", hash, post(1, 9, feb.AddDate(0, 1, 0)), state{false, "", chans[0], 5, "Dragon.zip", []string{"STL"}}},
		{"an earlier post", hash, post(1, 7, feb.AddDate(0, -1, 0)), state{true, "", chans[1], 7, "copy 7.zip", []string{"Fantasy"}}},
		{"the transfer's own source", hash, post(0, 5, feb.AddDate(-1, 0, 0)), state{false, hoard.ENOTFOUND, chans[1], 7, "copy 7.zip", []string{"Fantasy"}}},
		{"bytes nobody publishes", newHash(), post(0, 1, feb.AddDate(-1, 0, 0)), state{false, hoard.ENOTFOUND, chans[1], 7, "copy 7.zip", []string{"Fantasy"}}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			swapped, err := db.ClaimTransferSource(ctx, s.hash, s.post)
			cur, ferr := db.FindTransferForUpdate(ctx, tr.ID)
			if ferr != nil {
				t.Fatal(ferr)
			}
			got := state{swapped, hoard.ErrorCode(err), cur.Draft.SourceChannelID, cur.Draft.SourceMessageID, cur.Draft.FileName, cur.Draft.Tags}
			if !reflect.DeepEqual(got, s.want) {
				t.Errorf("got  %+v\nwant %+v", got, s.want)
			}
		})
	}
}
