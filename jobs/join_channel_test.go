package jobs

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
)

// TestJoinChannel joins through the real gotd adapter against the emulator:
// a public channel by username, a private one by invite link, a channel
// that approves members, an unknown username, an expired invite and a
// channel the account is already in (whose category stays: a join never
// changes it silently).
func TestJoinChannel(t *testing.T) {
	env := messengertest.Start(t, "")
	acc := env.Account(t, env.Config("account"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db := storetest.NewTx(t)
	account, err := db.CreateAccount(ctx, env.Info.Phone)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetAccountAuthState(ctx, account.ID, hoard.AuthAuthenticated, ""); err != nil {
		t.Fatal(err)
	}
	// Mammoth Factory is known already, with packages tagged "3D".
	known := &hoard.Channel{PlatformID: env.Emu.ChannelID("Mammoth Factory [Completed] 🦣"), Title: "Mammoth", Category: "3D"}
	if err := db.UpsertChannel(ctx, known); err != nil {
		t.Fatal(err)
	}
	pkg := &hoard.Package{FileName: "a.zip", FileSize: 1, ArchiveType: hoard.ArchiveZIP, ContentHash: fmt.Sprintf("%064x", 7),
		SourceChannelID: known.ID, Tags: []string{"3D", "dragons"}}
	if err := db.CreatePackage(ctx, pkg); err != nil {
		t.Fatal(err)
	}

	w := newJoinChannelWorker(newParts(Deps{DB: db, Logger: discardLogger(), Accounts: oneAccount{acc}}))
	tw := rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, river.Worker[hoard.JoinChannelArgs](w))
	join := func(input, category string) *hoard.ChannelJoin {
		t.Helper()
		ref, err := messenger.ParseChannelRef(input)
		if err != nil {
			t.Fatal(err)
		}
		j := &hoard.ChannelJoin{Ref: ref.String(), AccountID: account.ID, Category: category}
		if created, err := db.CreateChannelJoin(ctx, j); err != nil || !created {
			t.Fatalf("create join: %v %v", created, err)
		}
		res, err := tw.Work(ctx, t, db.Tx(), hoard.JoinChannelArgs{JoinID: j.ID}, nil)
		if err != nil || res.Job.State != rivertype.JobStateCompleted {
			t.Fatalf("join %s: %v %+v", input, err, res)
		}
		got, err := db.FindChannelJoin(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.FinishedAt == nil {
			t.Fatalf("join %s not finished: %+v", input, got)
		}
		return got
	}
	source := func(j *hoard.ChannelJoin) (*hoard.Channel, []hoard.ChannelMap) {
		t.Helper()
		ch, err := db.FindChannelByID(ctx, j.ChannelID)
		if err != nil {
			t.Fatal(err)
		}
		maps, err := db.ListChannelMaps(ctx, ch.ID)
		if err != nil {
			t.Fatal(err)
		}
		return ch, maps
	}

	t.Run("public channel", func(t *testing.T) {
		j := join("https://t.me/openshelf", "Prints")
		if j.Status != hoard.JoinJoined || j.Title != "Open Shelf" || j.ErrorMessage != "" {
			t.Fatalf("join = %+v", j)
		}
		ch, maps := source(j)
		type joined struct {
			Kind               hoard.ChannelKind
			Active             bool
			Category, Username string
			PlatformID         int64
		}
		if diff := cmp.Diff(joined{hoard.ChannelSource, true, "Prints", "openshelf", env.Emu.ChannelID("Open Shelf")},
			joined{ch.Kind, ch.IsActive, ch.Category, ch.Username, ch.PlatformID}); diff != "" {
			t.Fatalf("channel (-want +got):\n%s", diff)
		}
		if len(maps) != 1 || maps[0].AccountID != account.ID || maps[0].Role != hoard.MapReader || maps[0].AccessHash == 0 {
			t.Fatalf("maps = %+v", maps)
		}
		// A new source is scanned soon, not at the next scheduled cycle.
		if n := countJobs(t, db, "rescan_channel", map[string]any{"channel_id": ch.ID}); n != 1 {
			t.Fatalf("%d rescan jobs for the new channel, want 1", n)
		}
		// The map works: the account reads the channel through it.
		if _, err := acc.History(ctx, peerOf(ch, &maps[0]), messenger.HistoryQuery{}); err != nil {
			t.Fatalf("history through the new map: %v", err)
		}
	})
	t.Run("invite link", func(t *testing.T) {
		j := join("t.me/joinchat/Vault99", "")
		if j.Status != hoard.JoinJoined || j.Title != "Secret Vault" {
			t.Fatalf("join = %+v", j)
		}
		ch, maps := source(j)
		if !ch.IsProtected || !ch.IsActive || ch.InviteLink != "https://t.me/+Vault99" || len(maps) != 1 {
			t.Fatalf("channel = %+v, maps %+v", ch, maps)
		}
	})
	t.Run("join request", func(t *testing.T) {
		j := join("https://t.me/+Knock1", "")
		if j.Status != hoard.JoinRequestSent || j.Title != "Members Only" || j.ChannelID != 0 {
			t.Fatalf("join = %+v", j)
		}
		if _, err := db.FindChannelByPlatformID(ctx, env.Emu.ChannelID("Members Only")); hoard.ErrorCode(err) != hoard.ENOTFOUND {
			t.Fatalf("a channel waiting for approval became a source: %v", err)
		}
	})
	t.Run("unknown username", func(t *testing.T) {
		j := join("@nosuchchannel", "")
		if j.Status != hoard.JoinNotFound || j.ErrorMessage != "No channel is called @nosuchchannel." || j.ChannelID != 0 {
			t.Fatalf("join = %+v", j)
		}
	})
	t.Run("expired invite", func(t *testing.T) {
		j := join("https://t.me/+Gone000", "")
		if j.Status != hoard.JoinNotFound || j.ErrorMessage != "The invite link is invalid or has expired." {
			t.Fatalf("join = %+v", j)
		}
	})
	t.Run("already a member, another category", func(t *testing.T) {
		j := join("@mammothfactory", "STL")
		want := `The account was already a member. The channel was added before; its category stays "3D" (change it in the channel's settings).`
		if j.Status != hoard.JoinJoined || j.ChannelID != known.ID || j.ErrorMessage != want {
			t.Fatalf("join = %+v", j)
		}
		ch, maps := source(j)
		if ch.Category != "3D" || !ch.IsActive || len(maps) != 1 {
			t.Fatalf("channel = %+v, maps %+v", ch, maps)
		}
		// A channel hoard had keeps its progress: a cycle, no rescan.
		if n, m := countJobs(t, db, "rescan_channel", map[string]any{"channel_id": ch.ID}), countJobs(t, db, "ingest_cycle", nil); n != 0 || m != 1 {
			t.Fatalf("%d rescan jobs and %d cycles for a known channel, want 0 and 1", n, m)
		}
		p, err := db.FindPackageByID(ctx, pkg.ID)
		if err != nil || len(p.Tags) != 2 || p.Tags[0] != "3D" || p.Tags[1] != "dragons" {
			t.Fatalf("package tags = %v, %v (want them as they were)", p.Tags, err)
		}
	})
	t.Run("a final request is left alone", func(t *testing.T) {
		joins, err := db.ListChannelJoins(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		res, err := tw.Work(ctx, t, db.Tx(), hoard.JoinChannelArgs{JoinID: joins[0].ID}, nil)
		if err != nil || res.Job.State != rivertype.JobStateCompleted {
			t.Fatalf("work = %v %+v", err, res)
		}
		if again, _ := db.FindChannelJoin(ctx, joins[0].ID); again.UpdatedAt != joins[0].UpdatedAt {
			t.Fatal("a final request changed")
		}
	})
	t.Run("the destination is no source", func(t *testing.T) {
		dest := &hoard.Channel{PlatformID: env.Emu.DestinationID(), Title: "Hoard Archive", Kind: hoard.ChannelDestination}
		if err := db.UpsertChannel(ctx, dest); err != nil {
			t.Fatal(err)
		}
		if _, err := db.UpsertChannelMap(ctx, account.ID, dest.ID, 1, hoard.MapWriter); err != nil {
			t.Fatal(err)
		}
		j := join("@hoardarchive", "")
		if j.Status != hoard.JoinFailed || j.ErrorMessage == "" {
			t.Fatalf("join = %+v", j)
		}
		if m, err := db.FindWriterMap(ctx, dest.ID, 0); err != nil || m.Role != hoard.MapWriter {
			t.Fatalf("writer map = %+v, %v", m, err)
		}
	})
}

// countJobs counts the River jobs of kind whose args contain args.
func countJobs(t *testing.T, db *store.DB, kind string, args map[string]any) int {
	t.Helper()
	return len(storetest.Jobs(t, db, storetest.JobMatch{Kind: kind, Args: args}))
}
