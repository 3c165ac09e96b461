package jobs

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image/jpeg"
	"io"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive/rarwriter"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/messengertest"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"
)

// countingAccount counts the bytes every download delivers.
type countingAccount struct {
	messenger.Account
	downloaded atomic.Int64
}

func (c *countingAccount) Download(ctx context.Context, req messenger.DownloadRequest, w io.WriterAt) error {
	return c.Account.Download(ctx, req, countingWriter{w: w, n: &c.downloaded})
}

type countingWriter struct {
	w io.WriterAt
	n *atomic.Int64
}

func (c countingWriter) WriteAt(p []byte, off int64) (int, error) {
	n, err := c.w.WriteAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed+1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// testZip stores (or deflates) files in order.
func testZip(t *testing.T, files []struct {
	name    string
	data    []byte
	deflate bool
}) ([]byte, []hoard.PackageFile) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var listing []hoard.PackageFile
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Store}
		if f.deflate {
			h.Method = zip.Deflate
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(f.data); err != nil {
			t.Fatal(err)
		}
		listing = append(listing, hoard.PackageFile{Path: f.name, Size: int64(len(f.data))})
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), listing
}

func TestExtractPreview(t *testing.T) {
	env := messengertest.Start(t, "")
	real := env.Account(t, env.Config("account"))
	acc := &countingAccount{Account: real}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ref, err := messenger.ParseChannelRef("@hoardarchive")
	if err != nil {
		t.Fatal(err)
	}
	peer, err := real.ResolveChannel(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	post := func(name string, data []byte) int64 {
		t.Helper()
		id, err := real.Upload(ctx, messenger.UploadRequest{Channel: peer, FileName: name,
			Data: io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data)))})
		if err != nil {
			t.Fatalf("post %s: %v", name, err)
		}
		return int64(id)
	}

	// A ZIP of 8 MiB whose cover straddles the 5 MiB boundary where the
	// split package's second part starts.
	const split = 5 << 20
	cover := messengertest.JPEG(t, 640, 480)
	render := messengertest.JPEG(t, 200, 100)
	zipData, zipFiles := testZip(t, []struct {
		name    string
		data    []byte
		deflate bool
	}{
		{"models/part1.stl", randomBytes(split-10000, 1), false},
		{"renders/cover.jpg", cover, false},
		{"renders/small.jpg", render, true},
		{"renders/bomb.png", pngDeclaring(16000, 16000), true},
		{"models/part2.stl", randomBytes(3<<20, 2), false},
		{"notes.txt", []byte("not an image"), true},
	})
	if off := bytes.Index(zipData, cover); off >= split || off+len(cover) <= split {
		t.Fatalf("cover at %d+%d does not straddle %d", off, len(cover), split)
	}
	single := post("Big Pack.zip", zipData)
	part1 := post("Split Pack.zip.001", zipData[:split])
	part2 := post("Split Pack.zip.002", zipData[split:])

	png := messengertest.JPEG(t, 300, 300)
	rarData := rarwriter.Write([]rarwriter.File{{Name: "model.stl", Data: randomBytes(1<<20, 3)}, {Name: "preview.jpg", Data: png}},
		rarwriter.Options{})[0]
	rarMsg := post("Pack.rar", rarData)

	// An entry whose raw name could not be stored: the listing holds its
	// storable form, by which it is chosen.
	hostileData, _ := testZip(t, []struct {
		name    string
		data    []byte
		deflate bool
	}{{"nul\x00dir/c\xffover.jpg", cover, true}})
	hostileMsg := post("Hostile Pack.zip", hostileData)

	db, dest := destinationDB(t, env.Info.Phone, peer)
	pkg := func(name string, t0 hoard.ArchiveType, size int64, files []hoard.PackageFile, msgs ...int64) *hoard.Package {
		t.Helper()
		p := &hoard.Package{FileName: name, FileSize: size, ArchiveType: t0, PartCount: len(msgs)}
		if err := db.CreatePackage(ctx, p); err != nil {
			t.Fatal(err)
		}
		if err := db.SetPackageDestination(ctx, p.ID, dest.ID, msgs); err != nil {
			t.Fatal(err)
		}
		if err := db.ReplacePackageFiles(ctx, p.ID, files); err != nil {
			t.Fatal(err)
		}
		return p
	}
	zipPkg := pkg("Big Pack.zip", hoard.ArchiveZIP, int64(len(zipData)), zipFiles, single)
	splitPkg := pkg("Split Pack.zip", hoard.ArchiveZIP, int64(len(zipData)), zipFiles, part1, part2)
	hostilePkg := pkg("Hostile Pack.zip", hoard.ArchiveZIP, int64(len(hostileData)),
		[]hoard.PackageFile{{Path: storedEntryPath("nul\x00dir/c\xffover.jpg"), Size: int64(len(cover))}}, hostileMsg)
	rarPkg := pkg("Pack.rar", hoard.ArchiveRAR, int64(len(rarData)), []hoard.PackageFile{{Path: "model.stl", Size: 1 << 20},
		{Path: "preview.jpg", Size: int64(len(png))}}, rarMsg)

	w := newExtractPreviewWorker(newParts(Deps{DB: db, Logger: discardLogger(), Accounts: oneAccount{acc}, SpoolDir: t.TempDir()}))
	tw := rivertest.NewWorker(t, riverpgxv5.New(nil), &river.Config{}, river.Worker[hoard.ExtractPreviewArgs](w))
	extract := func(p *hoard.Package, entry string) (*hoard.PreviewExtraction, *rivertest.WorkResult, int64) {
		t.Helper()
		x, err := db.CreatePreviewExtraction(ctx, p.ID, entry, 0)
		if err != nil {
			t.Fatal(err)
		}
		before := acc.downloaded.Load()
		res, err := tw.Work(ctx, t, db.Tx(), hoard.ExtractPreviewArgs{PackageID: p.ID, EntryPath: entry, ExtractionID: x.ID}, nil)
		if err != nil {
			t.Fatalf("extract %s of %s: %v", entry, p.FileName, err)
		}
		got, err := db.FindPreviewExtraction(ctx, p.ID, x.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got, res, acc.downloaded.Load() - before
	}
	wantPreview := func(p *hoard.Package, w, h int) {
		t.Helper()
		data, err := db.FindPackagePreview(ctx, p.ID)
		if err != nil {
			t.Fatalf("preview of %s: %v", p.FileName, err)
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
		if err != nil || cfg.Width != w || cfg.Height != h {
			t.Fatalf("preview of %s is %d×%d (%v), want %d×%d", p.FileName, cfg.Width, cfg.Height, err, w, h)
		}
		again, err := db.FindPackageByID(ctx, p.ID)
		if err != nil || !again.HasPreview || again.PreviewMsgID != 0 {
			t.Fatalf("package after extraction: %+v, %v", again, err)
		}
	}

	t.Run("zip entry by ranged reads", func(t *testing.T) {
		x, res, n := extract(zipPkg, "renders/cover.jpg")
		if x.Status != hoard.ExtractionDone || x.Method != "ranged" || x.ErrorMessage != "" || res.Job.State != rivertype.JobStateCompleted {
			t.Fatalf("extraction %+v, job %s", x, res.Job.State)
		}
		// The last download chunk (the tail and the directory, 31 KiB here)
		// and the two 1 MiB chunks the entry spans: a quarter of the archive.
		if n > 2<<20+64<<10 || x.BytesDownloaded != n {
			t.Fatalf("downloaded %d bytes (recorded %d) of a %d-byte archive", n, x.BytesDownloaded, len(zipData))
		}
		wantPreview(zipPkg, 640, 480)
		t.Logf("ranged: %d of %d bytes", n, len(zipData))
	})
	t.Run("entry chosen by its stored name", func(t *testing.T) {
		x, _, _ := extract(hostilePkg, "nul\uFFFDdir/c\uFFFDover.jpg")
		if x.Status != hoard.ExtractionDone {
			t.Fatalf("extraction %+v", x)
		}
		wantPreview(hostilePkg, 640, 480)
	})
	t.Run("deflated entry", func(t *testing.T) {
		x, _, _ := extract(zipPkg, "renders/small.jpg")
		if x.Status != hoard.ExtractionDone {
			t.Fatalf("extraction %+v", x)
		}
		wantPreview(zipPkg, 200, 100)
	})
	t.Run("split package, entry across the parts", func(t *testing.T) {
		x, _, n := extract(splitPkg, "renders/cover.jpg")
		if x.Status != hoard.ExtractionDone || x.Method != "ranged" {
			t.Fatalf("extraction %+v", x)
		}
		// Part 2's last chunk, part 1's last chunk, part 2's first chunk.
		if n > 3<<20+64<<10 {
			t.Fatalf("downloaded %d bytes of a %d-byte archive", n, len(zipData))
		}
		wantPreview(splitPkg, 640, 480)
	})
	t.Run("rar falls back to a whole download", func(t *testing.T) {
		x, _, n := extract(rarPkg, "preview.jpg")
		if x.Status != hoard.ExtractionDone || x.Method != "whole" || n != int64(len(rarData)) || x.BytesDownloaded != n {
			t.Fatalf("extraction %+v, downloaded %d of %d", x, n, len(rarData))
		}
		wantPreview(rarPkg, 300, 300)
	})
	t.Run("rar over the download budget fails", func(t *testing.T) {
		w.budget = 1000
		defer func() { w.budget = 0 }()
		x, res, n := extract(rarPkg, "preview.jpg")
		if x.Status != hoard.ExtractionFailed || !strings.Contains(x.ErrorMessage, "larger than") || n != 0 || res.Job.State != rivertype.JobStateCancelled {
			t.Fatalf("extraction %+v, job %s, downloaded %d", x, res.Job.State, n)
		}
	})
	t.Run("refusals download nothing", func(t *testing.T) {
		for entry, want := range map[string]string{"missing.png": "no entry", "notes.txt": "not a JPEG", "models/part1.stl": "not a JPEG"} {
			x, res, n := extract(zipPkg, entry)
			if x.Status != hoard.ExtractionFailed || !strings.Contains(x.ErrorMessage, want) || n != 0 || res.Job.State != rivertype.JobStateCancelled {
				t.Fatalf("%s: extraction %+v, job %s, downloaded %d", entry, x, res.Job.State, n)
			}
		}
	})
	t.Run("pixel bomb refused by its header", func(t *testing.T) {
		x, res, _ := extract(zipPkg, "renders/bomb.png")
		const want = "The image is 16,000 × 16,000 pixels; previews may have at most 24 megapixels and 16,384 pixels a side."
		if x.Status != hoard.ExtractionFailed || x.ErrorMessage != want || res.Job.State != rivertype.JobStateCancelled {
			t.Fatalf("extraction %+v, job %s", x, res.Job.State)
		}
	})
	t.Run("a finished extraction is not redone", func(t *testing.T) {
		x, err := db.FindLatestPreviewExtraction(ctx, zipPkg.ID)
		if err != nil {
			t.Fatal(err)
		}
		res, err := tw.Work(ctx, t, db.Tx(), hoard.ExtractPreviewArgs{PackageID: zipPkg.ID, EntryPath: x.EntryPath, ExtractionID: x.ID}, nil)
		if err != nil || res.Job.State != rivertype.JobStateCompleted {
			t.Fatalf("rerun: %v %+v", err, res)
		}
	})
}

// pngDeclaring is a PNG signature and IHDR chunk declaring w×h, nothing
// more: the header a decompression bomb shows.
func pngDeclaring(w, h uint32) []byte {
	b := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	b = binary.BigEndian.AppendUint32(b, w)
	b = binary.BigEndian.AppendUint32(b, h)
	b = append(b, 8, 6, 0, 0, 0)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[12:]))
}
