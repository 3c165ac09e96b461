package download_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/download"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/hoard/hoard/messenger/telegram"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// countingObserver counts the bot's platform requests.
type countingObserver struct{ requests atomic.Int64 }

func (o *countingObserver) Request(string)                  { o.requests.Add(1) }
func (o *countingObserver) FloodWait(string, time.Duration) {}
func (o *countingObserver) Downloaded(int64)                {}
func (o *countingObserver) Uploaded(int64)                  {}

// world is an emulator whose destination channel holds packages posted
// by the account, the bot made its administrator, and a catalog that
// knows them.
type world struct {
	t        *testing.T
	ctx      context.Context
	env      *messengertest.Env
	acc      *telegram.Account
	dest     *messengertest.Destination
	db       *store.DB
	destRow  *hoard.Channel
	svc      *download.Service
	requests *countingObserver
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	// The bot lives on DC 4, the account (and what it posts) on its own:
	// every file is read from another DC than the bot's home.
	dir := t.TempDir()
	env := messengertest.StartIn(t, messengertest.DefaultSeedWith(t, dir, func(seed map[string]any) {
		seed["bot"].(map[string]any)["dc"] = 4
	}), dir)
	requests := &countingObserver{}
	cfg := env.Config("bot")
	cfg.Observer = requests
	d := env.DestinationWithBot(t, cfg)
	w := &world{t: t, ctx: ctx, env: env, acc: d.Account, dest: d, db: storetest.NewDB(t), requests: requests}
	w.destRow = &hoard.Channel{PlatformID: d.Channel.ID, Title: d.Channel.Title, Kind: hoard.ChannelDestination, IsActive: true}
	if err := w.db.UpsertChannel(ctx, w.destRow); err != nil {
		t.Fatal(err)
	}
	cache, err := download.OpenCache(filepath.Join(t.TempDir(), "cache"), 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	w.svc = &download.Service{DB: w.db, Cache: cache,
		Reader: func(context.Context) (messenger.FileReader, error) { return d.Bot, nil }}
	return w
}

// publish posts pieces under names and indexes a package of them.
func (w *world) publish(fileName string, names []string, pieces [][]byte) *hoard.Package {
	w.t.Helper()
	posted := w.dest.PostAll(w.t, names, pieces)
	p := &hoard.Package{FileName: fileName, FileSize: posted.Size, ArchiveType: hoard.ArchiveZIP, ContentHash: posted.SHA256,
		PartCount: len(pieces), DestChannelID: w.destRow.ID, DestMessageID: posted.IDs[0], DestMessageIDs: posted.IDs}
	if err := w.db.CreatePackage(w.ctx, p); err != nil {
		w.t.Fatal(err)
	}
	return p
}

func readAll(t *testing.T, c *download.Content, off int64) []byte {
	t.Helper()
	r, err := c.Open(context.Background(), off)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A package hoard split downloads as the original file, from any offset,
// and a second download asks the platform nothing.
func TestSplitPackageDownloadsJoined(t *testing.T) {
	w := newWorld(t)
	const piece = 3 << 19 // 1.5 MiB: a multiple of 512 KiB, across chunk boundaries
	orig := messengertest.Noise(1, 2*piece+12345)
	pkg := w.publish("Big Pack.zip", []string{"Big Pack.zip.001", "Big Pack.zip.002", "Big Pack.zip.003"},
		[][]byte{orig[:piece], orig[piece : 2*piece], orig[2*piece:]})

	c, err := w.svc.Open(w.ctx, pkg, 0)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Name string
		Size int64
		Hash string
	}
	full := readAll(t, c, 0)
	sum := sha256.Sum256(full)
	if g, want := (got{c.Name, c.Size, hex.EncodeToString(sum[:])}), (got{"Big Pack.zip", int64(len(orig)), pkg.ContentHash}); g != want {
		t.Fatalf("download = %+v, want %+v", g, want)
	}
	for _, off := range []int64{1, piece - 1, piece, piece + 1, 1 << 20, 2*piece - 100, int64(len(orig)) - 1} {
		if b := readAll(t, c, off); !bytes.Equal(b, orig[off:]) {
			t.Errorf("from %d: %d bytes differ from the original's %d", off, len(b), len(orig)-int(off))
		}
	}
	crc, ok, err := w.db.PackageChecksum(w.ctx, pkg, 0)
	if err != nil || !ok || crc == 0 {
		t.Errorf("checksum kept after a full read = %08x, %v, %v", crc, ok, err)
	}

	before := w.requests.requests.Load()
	again, err := w.svc.Open(w.ctx, pkg, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b := readAll(t, again, 0); !bytes.Equal(b, orig) {
		t.Fatal("second download differs")
	}
	if n := w.requests.requests.Load() - before; n != 0 {
		t.Errorf("second download made %d platform requests, want 0 (the cache)", n)
	}
	_, hits, _ := w.svc.Cache.Stats()
	if hits == 0 {
		t.Error("cache hits = 0 after a second download")
	}
}

// A set published as its volumes downloads volume by volume, or whole as
// a ZIP of them; a group's archive holds every package byte-identical
// and passes unzip -t.
func TestVolumesAndArchives(t *testing.T) {
	w := newWorld(t)
	v1, v2 := messengertest.Noise(2, 700_000), messengertest.Noise(3, 300_000)
	set := w.publish("Castle.part1.rar", []string{"Castle.part1.rar", "Castle.part2.rar"}, [][]byte{v1, v2})
	single := w.publish("dragon.stl", []string{"dragon.stl"}, [][]byte{messengertest.Noise(4, 5000)})
	twin := w.publish("dragon.stl", []string{"dragon.stl"}, [][]byte{messengertest.Noise(5, 6000)})

	c, err := w.svc.Open(w.ctx, set, 2)
	if err != nil {
		t.Fatal(err)
	}
	if b := readAll(t, c, 0); c.Name != "Castle.part2.rar" || !bytes.Equal(b, v2) {
		t.Fatalf("volume 2 = %q, %d bytes", c.Name, len(b))
	}
	parts, err := w.db.PackageParts(w.ctx, set)
	if err != nil {
		t.Fatal(err)
	}
	files := w.svc.Files(set, parts)
	want := []download.File{{Name: "Castle.part1.rar", Size: 700_000, Part: 1}, {Name: "Castle.part2.rar", Size: 300_000, Part: 2}}
	if fmt.Sprint(files) != fmt.Sprint(want) {
		t.Fatalf("Files = %+v, want %+v", files, want)
	}
	whole, err := w.svc.Open(w.ctx, set, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkZip(t, whole, map[string][]byte{"Castle.part1.rar": v1, "Castle.part2.rar": v2})

	arch, err := w.svc.Archive(w.ctx, "Dragons", []hoard.Package{*set, *single, *twin})
	if err != nil {
		t.Fatal(err)
	}
	checkZip(t, arch, map[string][]byte{"Castle.part1.rar": v1, "Castle.part2.rar": v2,
		"dragon.stl": messengertest.Noise(4, 5000), "dragon (2).stl": messengertest.Noise(5, 6000)})
	if arch.Name != "Dragons.zip" {
		t.Errorf("archive name = %q", arch.Name)
	}
}

// checkZip reads c whole, checks its length, its entries and unzip -t.
func checkZip(t *testing.T, c *download.Content, want map[string][]byte) {
	t.Helper()
	b := readAll(t, c, 0)
	if int64(len(b)) != c.Size {
		t.Fatalf("%s: %d bytes, advertised %d", c.Name, len(b), c.Size)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		got[f.Name] = data
	}
	if len(got) != len(want) {
		t.Errorf("%s holds %d entries, want %d", c.Name, len(got), len(want))
	}
	for name, data := range want {
		if !bytes.Equal(got[name], data) {
			t.Errorf("%s: entry %q differs (%d bytes, want %d)", c.Name, name, len(got[name]), len(data))
		}
	}
	path := filepath.Join(t.TempDir(), "a.zip")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, check := range [][]string{{"unzip", "-t", path},
		{"python3", "-c", "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); sys.exit(z.testzip() is not None)", path}} {
		if _, err := exec.LookPath(check[0]); err != nil {
			t.Logf("%s is not installed: not checked with it", check[0])
			continue
		}
		if out, err := exec.Command(check[0], check[1:]...).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", check[0], err, out)
		}
	}
}

// A post that is gone from the destination makes a download refuse with
// a message that says so, before its first byte.
func TestGonePostSaysSo(t *testing.T) {
	w := newWorld(t)
	pkg := w.publish("gone.zip", []string{"gone.zip"}, [][]byte{messengertest.Noise(6, 1000)})
	if err := w.acc.DeleteMessages(w.ctx, w.dest.Channel, []int{int(pkg.DestMessageIDs[0])}); err != nil {
		t.Fatal(err)
	}
	_, err := w.svc.Open(w.ctx, pkg, 0)
	type outcome struct{ Code, Message string }
	want := outcome{hoard.ENOTFOUND, "Part 1 of gone.zip is gone from the destination channel; an administrator can repair the package."}
	if got := (outcome{hoard.ErrorCode(err), hoard.ErrorMessage(err)}); got != want {
		t.Fatalf("Open = %+v (%v), want %+v", got, err, want)
	}
}

func TestPerUserLimit(t *testing.T) {
	svc := &download.Service{PerUser: 2}
	end1, err1 := svc.Begin(1)
	_, err2 := svc.Begin(1)
	_, err3 := svc.Begin(1)
	_, other := svc.Begin(2)
	end1()
	_, again := svc.Begin(1)
	got := []error{err1, err2, err3, other, again}
	want := []error{nil, nil, download.ErrBusy, nil, nil}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Begin = %v, want %v", got, want)
	}
}
