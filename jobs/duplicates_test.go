package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/emulator"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/store"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
)

// copyWorld is one emulator world holding the same bytes in three
// channels, and what each copy is: Alpha posts "Dragon.zip" in February,
// Gamma the same name on 1 January, Beta "Dragon Copy.zip" (the same bytes
// under another name) on 1 January too. hoard's channel ids are assigned
// Alpha, Gamma, Beta: Gamma's post is the earliest (same date as Beta's, a
// smaller channel id).
type copyWorld struct {
	env    *messengertest.Env
	acc    messenger.Account
	peer   messenger.Channel // the destination
	copies []sourceCopy      // Alpha, Gamma, Beta
	size   int64             // of the shared bytes
}

// sourceCopy is one channel's post of the shared bytes.
type sourceCopy struct {
	title, username, category, file string
	peer                            messenger.Channel
	messageID                       int64
}

func newCopyWorld(t *testing.T) *copyWorld {
	t.Helper()
	dir := t.TempDir()
	data := zipOf(t, "Dragon/body.stl", []byte("solid body\nendsolid body\n"), "Dragon/readme.txt", []byte("a dragon"))
	if err := os.WriteFile(filepath.Join(dir, "dragon.zip"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	copies := []sourceCopy{
		{title: "Alpha Minis", username: "alphaminis", category: "STL", file: "Dragon.zip"},
		{title: "Gamma Forge", username: "gammaforge", file: "Dragon.zip"},
		{title: "Beta Vault", username: "betavault", category: "Fantasy", file: "Dragon Copy.zip"},
	}
	dates := []string{"2024-02-01T10:00:00Z", "2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z"}
	var channels []map[string]any
	for i, c := range copies {
		channels = append(channels, map[string]any{"title": c.title, "username": c.username, "joined": true,
			"posts": []map[string]any{{"file": "dragon.zip", "name": c.file, "date": dates[i], "caption": "from " + c.title}}})
	}
	seed := writeJSONSeed(t, dir, map[string]any{
		"account":     map[string]any{"phone": "+15550000001", "premium": false},
		"destination": map[string]any{"title": "Hoard Archive", "username": "hoardarchive"},
		"channels":    channels,
	})
	env := messengertest.Start(t, seed)
	acc := env.Account(t, env.Config("account"))
	ctx := context.Background()
	w := &copyWorld{env: env, acc: acc, peer: resolveChannel(t, acc, "@hoardarchive"), size: int64(len(data))}
	for _, c := range copies {
		c.peer = resolveChannel(t, acc, "@"+c.username)
		msgs, err := acc.History(ctx, c.peer, messenger.HistoryQuery{})
		if err != nil || len(msgs) != 1 || msgs[0].Document == nil {
			t.Fatalf("history of %s: %v, %v", c.username, msgs, err)
		}
		c.messageID = int64(msgs[0].ID)
		w.copies = append(w.copies, c)
	}
	return w
}

// writeJSONSeed writes an emulator seed into dir and returns its path.
func writeJSONSeed(t *testing.T, dir string, seed map[string]any) string {
	t.Helper()
	path := filepath.Join(dir, "seed.json")
	data, err := json.Marshal(seed)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// copyCatalog is a fresh database for one ingestion of the world: the
// channels (in the order Alpha, Gamma, Beta) and their maps.
type copyCatalog struct {
	db       *store.DB
	channels []*hoard.Channel
	maps     []int64
}

func (w *copyWorld) catalog(t *testing.T) *copyCatalog {
	t.Helper()
	ctx := context.Background()
	db, _ := destinationDB(t, w.env.Info.Phone, w.peer)
	account, err := db.FindAccountByPhone(ctx, w.env.Info.Phone)
	if err != nil {
		t.Fatal(err)
	}
	c := &copyCatalog{db: db}
	for _, cp := range w.copies {
		ch := &hoard.Channel{PlatformID: cp.peer.ID, Title: cp.title, Username: cp.username, Kind: hoard.ChannelSource,
			IsActive: true, Category: cp.category}
		if err := db.UpsertChannel(ctx, ch); err != nil {
			t.Fatal(err)
		}
		m, err := db.UpsertChannelMap(ctx, account.ID, ch.ID, cp.peer.AccessHash, hoard.MapReader)
		if err != nil {
			t.Fatal(err)
		}
		c.channels, c.maps = append(c.channels, ch), append(c.maps, m.ID)
	}
	return c
}

// dupPackage is what the test compares of the catalogued package.
type dupPackage struct {
	FileName  string
	Creator   string
	Tags      []string
	ChannelID int64
	MessageID int64
	PostedAt  time.Time
	Caption   string
}

// TestEarliestPostIsThePackage ingests the same bytes posted in three
// channels with the jobs run in every order, and in several interleavings:
// each copy published before the next is looked at; every copy downloaded
// before the first is published (the later ones claim the publication in
// flight); the first published, then the other channels scanned (the same
// name is a duplicate before any download, the other name after it). The
// package is always the earliest post — its channel, message, name,
// creator and category tag — and it is the only package.
func TestEarliestPostIsThePackage(t *testing.T) {
	w := newCopyWorld(t)
	ctx := context.Background()
	orders := [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	modes := []string{"one after another", "all downloaded first", "first published, others scanned"}
	for _, mode := range modes {
		for _, order := range orders {
			t.Run(fmt.Sprintf("%s/%v", mode, order), func(t *testing.T) {
				c := w.catalog(t)
				deps := Deps{DB: c.db, Logger: discardLogger(), Accounts: oneAccount{w.acc}, SpoolDir: t.TempDir(),
					SplitThreshold: 1 << 30, MaxSkipAttempts: 1, RetryBase: time.Second, SettleTime: time.Minute,
					WorkerInterval: time.Hour, Now: time.Now}
				ingest := func(i int) rivertype.JobState {
					cp := w.copies[i]
					args := hoard.IngestMessageArgs{ChannelID: c.channels[i].ID, MessageID: cp.messageID, MapID: c.maps[i],
						FileName: cp.file, Size: w.size,
						Parts: []hoard.SourcePart{{MessageID: cp.messageID, Name: cp.file, Size: w.size}}}
					return runJobIn(t, c.db, river.Worker[hoard.IngestMessageArgs](newIngestMessageWorker(newParts(deps))), args)
				}
				publish := func() {
					ts, err := c.db.ListUnfinishedTransfers(ctx)
					if err != nil {
						t.Fatal(err)
					}
					for _, tr := range ts {
						for p := range tr.PartsTotal {
							runJobIn(t, c.db, river.Worker[hoard.UploadPartArgs](newUploadPartWorker(newParts(deps))), hoard.UploadPartArgs{TransferID: tr.ID, PartNo: p})
						}
						if st := runJobIn(t, c.db, river.Worker[hoard.VerifyTransferArgs](newVerifyTransferWorker(newParts(deps))),
							hoard.VerifyTransferArgs{TransferID: tr.ID}); st != rivertype.JobStateCompleted {
							t.Fatalf("verify: %s", st)
						}
					}
				}
				switch mode {
				case "one after another":
					for _, i := range order {
						ingest(i)
						publish()
					}
				case "all downloaded first":
					for _, i := range order {
						if st := ingest(i); st != rivertype.JobStateCompleted {
							t.Fatalf("ingest %d: %s", i, st)
						}
					}
					publish()
				default:
					ingest(order[0])
					publish()
					for _, i := range order[1:] {
						scan := river.Worker[hoard.ScanChannelArgs](newScanChannelWorker(newParts(deps)))
						if st := runJobIn(t, c.db, scan, hoard.ScanChannelArgs{MapID: c.maps[i]}); st != rivertype.JobStateCompleted {
							t.Fatalf("scan %d: %s", i, st)
						}
						ingest(i) // what the scan queued, if anything
						publish()
					}
				}
				if n, err := c.db.CountRows(ctx, "packages"); err != nil || n != 1 {
					t.Fatalf("packages = %d, %v; want 1", n, err)
				}
				got := c.pkg(t)
				gamma := w.copies[1]
				want := dupPackage{FileName: "Dragon.zip", Creator: "Gamma Forge", Tags: []string{}, ChannelID: c.channels[1].ID,
					MessageID: gamma.messageID, PostedAt: time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC), Caption: "from Gamma Forge"}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("package:\n got  %+v\n want %+v", got, want)
				}
			})
		}
	}
}

// runJobIn runs one job of args to its end in db's test transaction.
func runJobIn[T river.JobArgs](t *testing.T, db *store.DB, worker river.Worker[T], args T) rivertype.JobState {
	t.Helper()
	tw := rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, worker)
	res, err := tw.Work(context.Background(), t, db.Tx(), args, &river.InsertOpts{MaxAttempts: 1})
	if err != nil && res == nil {
		t.Fatalf("work %s: %v", args.Kind(), err)
	}
	if err != nil {
		t.Logf("work %s: %v", args.Kind(), err)
	}
	return res.Job.State
}

func (c *copyCatalog) pkg(t *testing.T) dupPackage {
	t.Helper()
	ps, _, err := c.db.ListPackages(context.Background(), store.PackageFilter{}, nil, 10)
	if err != nil || len(ps) != 1 {
		t.Fatalf("packages %v, %v", ps, err)
	}
	p := ps[0]
	tags := slices.Clone(p.Tags)
	if tags == nil {
		tags = []string{}
	}
	return dupPackage{FileName: p.FileName, Creator: p.Creator, Tags: tags, ChannelID: p.SourceChannelID,
		MessageID: p.SourceMessageID, PostedAt: p.SourcePostedAt.UTC(), Caption: p.SourceCaption}
}

// TestEarliestPostSurvivesAFailedPublication: Alpha's copy is being
// published when Gamma's earlier copy claims it; the publication then fails
// for good, and Alpha's set is retried. The retry's package is still
// Gamma's post, and no skipped record is left for Alpha's set, which is in
// the catalog.
func TestEarliestPostSurvivesAFailedPublication(t *testing.T) {
	w := newCopyWorld(t)
	ctx := context.Background()
	c := w.catalog(t)
	deps := Deps{DB: c.db, Logger: discardLogger(), Accounts: oneAccount{w.acc}, SpoolDir: t.TempDir(),
		SplitThreshold: 1 << 30, MaxSkipAttempts: 1, RetryBase: time.Second, Now: time.Now}
	ingest := func(i int) rivertype.JobState {
		cp := w.copies[i]
		args := hoard.IngestMessageArgs{ChannelID: c.channels[i].ID, MessageID: cp.messageID, MapID: c.maps[i],
			FileName: cp.file, Size: w.size, Parts: []hoard.SourcePart{{MessageID: cp.messageID, Name: cp.file, Size: w.size}}}
		return runJobIn(t, c.db, river.Worker[hoard.IngestMessageArgs](newIngestMessageWorker(newParts(deps))), args)
	}
	publish := func() []rivertype.JobState {
		ts, err := c.db.ListUnfinishedTransfers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var states []rivertype.JobState
		for _, tr := range ts {
			for p := range tr.PartsTotal {
				states = append(states, runJobIn(t, c.db, river.Worker[hoard.UploadPartArgs](newUploadPartWorker(newParts(deps))),
					hoard.UploadPartArgs{TransferID: tr.ID, PartNo: p}))
			}
			if fresh, err := c.db.FindTransfer(ctx, tr.ID); err == nil && fresh.Status == hoard.TransferVerifying {
				states = append(states, runJobIn(t, c.db, river.Worker[hoard.VerifyTransferArgs](newVerifyTransferWorker(newParts(deps))),
					hoard.VerifyTransferArgs{TransferID: tr.ID}))
			}
		}
		return states
	}
	if st := ingest(0); st != rivertype.JobStateCompleted { // Alpha: publication in flight
		t.Fatalf("ingest Alpha: %s", st)
	}
	if st := ingest(1); st != rivertype.JobStateCompleted { // Gamma claims it
		t.Fatalf("ingest Gamma: %s", st)
	}
	w.env.Emu.InjectFault(emulator.Fault{Method: "messages.sendMedia", Error: "MEDIA_INVALID", Times: 1})
	if states := publish(); !slices.Equal(states, []rivertype.JobState{rivertype.JobStateDiscarded}) {
		t.Fatalf("failing publication: %v", states)
	}
	if s, err := c.db.FindSkippedBySource(ctx, c.channels[0].ID, w.copies[0].messageID); err != nil || s.Status != hoard.SkipGaveUp {
		t.Fatalf("Alpha's skipped record after the failure: %+v, %v", s, err)
	}
	if st := ingest(0); st != rivertype.JobStateCompleted { // the retry of Alpha's set
		t.Fatalf("retry Alpha: %s", st)
	}
	publish()
	gamma := w.copies[1]
	want := dupPackage{FileName: "Dragon.zip", Creator: "Gamma Forge", Tags: []string{}, ChannelID: c.channels[1].ID,
		MessageID: gamma.messageID, PostedAt: time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC), Caption: "from Gamma Forge"}
	if got := c.pkg(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("package:\n got  %+v\n want %+v", got, want)
	}
	if n, err := c.db.CountRows(ctx, "skipped_packages"); err != nil || n != 0 {
		t.Errorf("skipped records left: %d, %v", n, err)
	}
}
