package jobs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
	"github.com/jackc/pgx/v5"
)

var (
	benchFirst  = []string{"Mammoth", "Dragon", "Iron", "Shadow", "Crystal", "Golden", "Arcane", "Rusty", "Silver", "Wild", "Epic", "Tiny"}
	benchSecond = []string{"Factory", "Forge", "Minis", "Studio", "Works", "Miniatures", "Sculpts", "Creations", "Legends", "Guild"}
	benchModels = []string{"Dragon", "Knight", "Orc Warband", "Goblin King", "Lich", "Paladin", "Wyvern", "Dwarf Ranger", "Elf Archer",
		"Beholder", "Treant", "Owlbear", "Mimic", "Necromancer", "Titan", "Hydra", "Centaur", "Kraken", "Golem", "Vampire Lord"}
	benchVariants = []string{"Supported", "Unsupported", "Bust", "Base", "Bundle", "Terrain", "Arms", "Weapons", "Hollow"}
)

// seedChannel stores n packages of a channel with 3–10 archive paths each,
// posted by creators in sessions (bursts of minutes, hours apart) with dated,
// project and free-form names, albums, captions and reply chains, like a
// real channel; seeds give different packages over the same time span. It
// writes through COPY: CreatePackage would take seconds for 10,000 rows.
func seedChannel(tb testing.TB, db *store.DB, channelID int64, n int, seed uint64) {
	tb.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 2))
	now := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	msg := int64(1000)
	var rows [][]any
	var paths [][]string
	var albumSeq int64
	for len(rows) < n {
		now = now.Add(time.Duration(1+r.IntN(12)) * time.Hour)
		creator := benchFirst[r.IntN(len(benchFirst))] + " " + benchSecond[min(r.IntN(len(benchSecond)), r.IntN(len(benchSecond)))]
		style := r.IntN(4)
		var albumID any
		if r.IntN(10) == 0 {
			albumSeq++
			albumID = albumSeq
		}
		var caption any
		if r.IntN(3) == 0 {
			caption = fmt.Sprintf("%s %s collection", benchModels[r.IntN(len(benchModels))], benchVariants[r.IntN(len(benchVariants))])
		}
		root := int64(0)
		for k := 1 + r.IntN(8); k > 0 && len(rows) < n; k-- {
			now = now.Add(time.Duration(30+r.IntN(150)) * time.Second)
			msg += int64(1 + r.IntN(3))
			var replyTo any
			switch {
			case root == 0:
				root = msg
			case r.IntN(5) == 0:
				replyTo = root
			case r.IntN(30) == 0:
				replyTo = 1000 + r.Int64N(msg-1000)
			}
			model := benchModels[r.IntN(len(benchModels))]
			variant := benchVariants[r.IntN(len(benchVariants))]
			var name string
			switch style {
			case 0:
				name = fmt.Sprintf("%s - %s - %s.zip", creator, now.Format("2006-01"), model)
			case 1:
				name = fmt.Sprintf("%s_%s_%d.rar", strings.ReplaceAll(model, " ", "_"), variant, r.IntN(100))
			case 2:
				name = fmt.Sprintf("%s %s (%s).zip", benchFirst[r.IntN(len(benchFirst))], model, variant)
			default:
				name = fmt.Sprintf("%s%d.zip", strings.ReplaceAll(model, " ", ""), r.IntN(1000))
			}
			var ps []string
			for f := range 3 + r.IntN(8) {
				ps = append(ps, fmt.Sprintf("%s/%s/part_%02d.stl", strings.TrimSuffix(name, ".zip"), variant, f))
			}
			id := len(rows) + 1
			rows = append(rows, []any{name, int64(1000 + id), "ZIP", fmt.Sprintf("%064x", 1<<40+seed<<32+uint64(id)), len(ps), creator,
				channelID, msg, now, albumID, caption, replyTo})
			paths = append(paths, ps)
		}
	}
	tx := db.Tx()
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"packages"}, []string{"file_name", "file_size", "archive_type", "content_hash",
		"file_count", "creator", "source_channel_id", "source_message_id", "source_posted_at", "media_album_id", "source_caption",
		"reply_to_message_id"},
		pgx.CopyFromRows(rows)); err != nil {
		tb.Fatal(err)
	}
	var ids []int64 // the channel's packages, oldest first; the newest len(rows) are these
	for _, p := range storetest.Packages(tb, db) {
		if p.SourceChannelID == channelID {
			ids = append(ids, p.ID)
		}
	}
	if ids = ids[max(0, len(ids)-len(rows)):]; len(ids) != len(paths) {
		tb.Fatalf("seeded ids: %d, want %d", len(ids), len(paths))
	}
	var files [][]any
	for i, ps := range paths {
		for o, p := range ps {
			files = append(files, []any{ids[i], o, p, p[strings.LastIndexByte(p, '/')+1:]})
		}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"package_files"}, []string{"package_id", "ordinal", "path", "file_name"},
		pgx.CopyFromRows(files)); err != nil {
		tb.Fatal(err)
	}
	storetest.Analyze(tb, db, "packages", "package_files", "package_groups")
}

// BenchmarkGroupChannelIncremental measures one grouping run after one new
// package arrived in a channel of 10,000 packages that was grouped before:
// load the channel, plan, apply (the package joins an existing group). The
// first, full grouping of the channel is reported as full-ms.
func BenchmarkGroupChannelIncremental(b *testing.B) {
	db := storetest.NewDB(b) // committed rows, so that VACUUM can run
	ctx := context.Background()
	ch := &hoard.Channel{PlatformID: 777, Title: "Bench", Kind: hoard.ChannelSource}
	if err := db.UpsertChannel(ctx, ch); err != nil {
		b.Fatal(err)
	}
	if err := db.InTx(ctx, func(tx *store.DB) error { seedChannel(b, tx, ch.ID, 10_000, 1); return nil }); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	full, err := GroupChannel(ctx, db, ch.ID, 5*time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	fullMS := float64(time.Since(start).Microseconds()) / 1000
	// A channel grouped a while ago has been vacuumed and analysed since.
	storetest.Vacuum(b, db, "packages", "package_groups", "package_files")

	// A project group that every new package joins by its pattern key.
	posted := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	add := func() int64 {
		n++
		posted = posted.Add(24 * time.Hour)
		p := &hoard.Package{FileName: fmt.Sprintf("Bench Project (v%d).zip", n), FileSize: int64(n), ArchiveType: hoard.ArchiveZIP,
			ContentHash: fmt.Sprintf("%064x", 1<<50+n), SourceChannelID: ch.ID, SourceMessageID: 1 << 40, SourcePostedAt: posted}
		if err := db.CreatePackage(ctx, p); err != nil {
			b.Fatal(err)
		}
		return p.ID
	}
	add()
	add()
	if res, err := GroupChannel(ctx, db, ch.ID, 5*time.Minute); err != nil || res.GroupsCreated != 1 {
		b.Fatalf("project group: %+v, %v", res, err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		add()
		b.StartTimer()
		res, err := GroupChannel(ctx, db, ch.ID, 5*time.Minute)
		if err != nil || res.PackagesMoved != 1 || res.GroupsCreated != 0 {
			b.Fatalf("incremental run: %+v, %v", res, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(fullMS, "full-ms")
	b.ReportMetric(float64(full.PackagesMoved), "grouped")
}
