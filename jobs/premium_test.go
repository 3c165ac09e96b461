package jobs

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// The Premium tests scale the platform down: the regular part cap is 22
// parts of 512 KiB (11 MiB, the platform's 4,000 = 2,000 MiB) and so is
// the split threshold, so 12 MiB files stand for files over 2,000 MiB.
const (
	testRegularParts = 22
	testRegularLimit = testRegularParts * 512 << 10
	bigFile          = 12 << 20
)

// newVaultWorld is the default world plus @bigvault, a protected channel
// (its files are uploaded, never re-sent) holding sets of bigFile-sized
// generated parts, one set per entry of sets (its part names); the account
// starts Premium or not, on the platform and in the database alike.
func newVaultWorld(t *testing.T, premium bool, sets ...[]string) *publishWorld {
	t.Helper()
	dir := t.TempDir()
	var posts []any
	for i, set := range sets {
		for j, name := range set {
			posts = append(posts, map[string]any{"generate": map[string]any{"name": name, "size": bigFile, "seed": 100*i + j}})
		}
	}
	seed := messengertest.DefaultSeedWith(t, dir, func(s map[string]any) {
		s["account"].(map[string]any)["premium"] = premium
		s["channels"] = append(s["channels"].([]any), map[string]any{"title": "Big Vault", "username": "bigvault",
			"joined": true, "protected": true, "posts": posts})
	})
	env := messengertest.StartIn(t, seed, dir)
	env.Emu.SetPartCaps(testRegularParts, 0)
	acc := env.Account(t, env.Config("account"))
	ctx := context.Background()
	peer, src := resolveChannel(t, acc, "@hoardarchive"), resolveChannel(t, acc, "@bigvault")
	db, dest := destinationDB(t, env.Info.Phone, peer)
	account, err := db.FindAccountByPhone(ctx, env.Info.Phone)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetAccountPremium(ctx, account.ID, premium); err != nil {
		t.Fatal(err)
	}
	source, mapID := sourceOf(t, db, account.ID, src) // protected: its resolved view says so
	return &publishWorld{env: env, acc: acc, db: db, dest: dest, peer: peer, source: source, mapID: mapID}
}

// setArgs is the ingest_message job of a set whose parts are the vault's
// messages from first on (the channel's own message is 1).
func (w *publishWorld) setArgs(fileName string, first int, names ...string) hoard.IngestMessageArgs {
	a := hoard.IngestMessageArgs{ChannelID: w.source.ID, MessageID: int64(first), MapID: w.mapID, FileName: fileName,
		Size: int64(len(names)) * bigFile}
	for i, n := range names {
		a.Parts = append(a.Parts, hoard.SourcePart{MessageID: int64(first + i), Name: n, Size: bigFile})
	}
	return a
}

// vaultDeps are the jobs' dependencies in a vault world: the scaled-down
// regular limit.
func vaultDeps(t *testing.T, w *publishWorld) Deps {
	return Deps{DB: w.db, Logger: discardLogger(), Accounts: oneAccount{w.acc}, SpoolDir: t.TempDir(),
		SplitThreshold: testRegularLimit, MaxSkipAttempts: 3, RetryBase: time.Second}
}

// planned lists a transfer's parts as "name:bytes", in order.
func planned(t *testing.T, w *publishWorld, transferID int64) []string {
	t.Helper()
	parts, err := w.db.ListTransferParts(context.Background(), transferID)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = fmt.Sprintf("%s:%d", p.Name, p.Length)
	}
	return out
}

// TestSplitFollowsPremiumNow plans a set over the regular limit after the
// account's Premium state changed since it was stored: the plan follows
// the platform's answer now, and the stored flag is updated.
func TestSplitFollowsPremiumNow(t *testing.T) {
	t.Parallel()
	type outcome struct {
		Parts   []string
		Premium bool
	}
	half := fmt.Sprint(bigFile / 2)
	for _, tc := range []struct {
		name        string
		stored, now bool
		want        outcome
	}{
		{"Premium lapsed", true, false, outcome{[]string{"Big.zip.001:" + half, "Big.zip.002:" + half}, false}},
		{"Premium started", false, true, outcome{[]string{"Big.zip:" + fmt.Sprint(bigFile)}, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newVaultWorld(t, tc.stored, []string{"Big.zip"})
			ctx := context.Background()
			if err := w.env.Emu.SetPremium(w.env.Emu.AccountID(), tc.now); err != nil {
				t.Fatal(err)
			}
			if st := work(t, w, river.Worker[hoard.IngestMessageArgs](newIngestMessageWorker(newParts(vaultDeps(t, w)))), w.setArgs("Big.zip", 2, "Big.zip")); st != rivertype.JobStateCompleted {
				t.Fatalf("ingest: %s", st)
			}
			tr, err := w.db.FindTransferBySource(ctx, w.source.ID, 2)
			if err != nil {
				t.Fatal(err)
			}
			acc, err := w.db.FindAccountByPhone(ctx, w.env.Info.Phone)
			if err != nil {
				t.Fatal(err)
			}
			got := outcome{Parts: planned(t, w, tr.ID), Premium: acc.IsPremium}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestRefusedPartIsSplit: a set planned while the account was Premium
// posts its first part, then Premium lapses and the platform refuses the
// others as too large (FILE_PARTS_INVALID). Each is split in place at the
// regular limit (its pieces named after it, numbered after the last part),
// the first part's post stays, and the set is published in byte order and
// verified whole.
func TestRefusedPartIsSplit(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t, true, []string{"Set.zip.001", "Set.zip.002", "Set.zip.003"})
	ctx := context.Background()
	deps := vaultDeps(t, w)
	upload := func(no int) rivertype.JobState {
		t.Helper()
		return work(t, w, river.Worker[hoard.UploadPartArgs](newUploadPartWorker(newParts(deps))), hoard.UploadPartArgs{TransferID: tr(t, w).ID, PartNo: no})
	}
	args := w.setArgs("Set.zip", 2, "Set.zip.001", "Set.zip.002", "Set.zip.003")
	if st := work(t, w, river.Worker[hoard.IngestMessageArgs](newIngestMessageWorker(newParts(deps))), args); st != rivertype.JobStateCompleted {
		t.Fatalf("ingest: %s", st)
	}
	full, half := fmt.Sprint(bigFile), fmt.Sprint(bigFile/2)
	if got, want := planned(t, w, tr(t, w).ID), []string{"Set.zip.001:" + full, "Set.zip.002:" + full, "Set.zip.003:" + full}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("planned while Premium: %v, want %v", got, want)
	}
	if st := upload(0); st != rivertype.JobStateCompleted {
		t.Fatalf("part 0: %s", st)
	}
	first, err := w.db.FindTransferPart(ctx, tr(t, w).ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.env.Emu.SetPremium(w.env.Emu.AccountID(), false); err != nil {
		t.Fatal(err)
	}
	refused := []rivertype.JobState{upload(1), upload(2)}

	type state struct {
		Jobs       []rivertype.JobState
		Parts      []string
		PartsTotal int
		Premium    bool
		FirstPost  int64
	}
	acc, err := w.db.FindAccountByPhone(ctx, w.env.Info.Phone)
	if err != nil {
		t.Fatal(err)
	}
	after, err := w.db.FindTransferPart(ctx, tr(t, w).ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := state{refused, planned(t, w, tr(t, w).ID), tr(t, w).PartsTotal, acc.IsPremium, after.DestMessageID}
	snoozed := rivertype.JobStateAvailable // a second's snooze: no attempt spent
	want := state{[]rivertype.JobState{snoozed, snoozed}, []string{"Set.zip.001:" + full, "Set.zip.002.001:" + half,
		"Set.zip.002.002:" + half, "Set.zip.003.001:" + half, "Set.zip.003.002:" + half}, 5, false, first.DestMessageID}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the refusals:\n got  %+v\n want %+v", got, want)
	}
	for no := 1; no <= 4; no++ {
		if st := upload(no); st != rivertype.JobStateCompleted {
			t.Fatalf("piece %d: %s", no, st)
		}
	}
	id := tr(t, w).ID
	if st := work(t, w, river.Worker[hoard.VerifyTransferArgs](newVerifyTransferWorker(newParts(deps))), hoard.VerifyTransferArgs{TransferID: id}); st != rivertype.JobStateCompleted {
		t.Fatalf("verify: %s", st)
	}
	p, err := w.db.FindPackageBySourceMessage(ctx, w.source.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := w.db.ListNotifications(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	type published struct {
		Parts     int
		FirstPost int64
		Posts     []string // the package's posts, in part order
		Notes     int
	}
	if got, want := (published{p.PartCount, p.DestMessageIDs[0], postNames(t, w, p.DestMessageIDs), len(notes)}),
		(published{5, first.DestMessageID, []string{"Set.zip.001", "Set.zip.002.001", "Set.zip.002.002", "Set.zip.003.001",
			"Set.zip.003.002"}, 0}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("published %+v, want %+v", got, want)
	}
}

// tr is the vault set's transfer (its first message is 2).
func tr(t *testing.T, w *publishWorld) *hoard.Transfer {
	t.Helper()
	x, err := w.db.FindTransferBySource(context.Background(), w.source.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// postNames returns the file names of destination posts ids, in order.
func postNames(t *testing.T, w *publishWorld, ids []int64) []string {
	t.Helper()
	msgs, err := w.acc.History(context.Background(), w.peer, messenger.HistoryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]string{}
	for _, m := range msgs {
		if m.Document != nil {
			byID[int64(m.ID)] = m.Document.FileName
		}
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = byID[id]
	}
	return out
}
