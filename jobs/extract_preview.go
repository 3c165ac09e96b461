package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// Budgets of ExtractPreviewWorker.
const (
	// RangedPreviewBudget caps the bytes one extraction downloads with
	// ranged reads: the archive's tail and central directory (at most
	// archive.DefaultMaxZipDirectory) and the entry, rounded out to the
	// platform's download chunks.
	RangedPreviewBudget = 48 << 20
	// DefaultPreviewDownloadBudget is the default of
	// Deps.PreviewDownloadBudget: the largest archive downloaded whole to
	// extract a chosen preview from (RAR, 7z, or a ZIP whose index cannot
	// be used).
	DefaultPreviewDownloadBudget = 512 << 20
)

// Extraction methods recorded on a PreviewExtraction.
const (
	methodRanged = "ranged"
	methodWhole  = "whole"
)

// ExtractPreviewWorker runs ExtractPreviewArgs: it fetches one image entry
// of a package's archive from the package's destination messages, makes a
// bounded JPEG thumbnail of it (archive.MakeThumbnail) and stores that as
// the package's preview together with DONE on the extraction, in the
// transaction that completes the job.
//
// A ZIP entry is read with ranged downloads (archive.ReadZipEntry over the
// concatenation of the package's parts: our byte splits and a source's own
// .zip.001 volumes alike), so only the archive's tail, its central
// directory and the entry's chunks move. RAR and 7z archives, and a ZIP
// whose index cannot be used (archive.ErrNoRange), are downloaded whole
// into a private spool directory, within Deps.PreviewDownloadBudget, and
// the entry is taken out with archive.Extract (its size, solid-block, time
// and dictionary budgets, panics recovered). Entry names never reach the
// file system: spool files are named by part number.
//
// Bad input (no such entry, not an image, encrypted, too large, a corrupt
// image) fails the extraction at once with a message for the page; network
// failures are retried, a rate limit snoozes.
type ExtractPreviewWorker struct {
	worker[hoard.ExtractPreviewArgs]
	db       *store.DB
	log      *slog.Logger
	platform *platform
	spool    *spool
	// budget is Deps.PreviewDownloadBudget (DefaultPreviewDownloadBudget
	// when <= 0).
	budget int64
}

func newExtractPreviewWorker(p *parts) *ExtractPreviewWorker {
	return &ExtractPreviewWorker{worker: worker[hoard.ExtractPreviewArgs]{fail: p.fail}, db: p.db, log: p.log, platform: p.platform,
		spool: p.spool, budget: p.cfg.PreviewDownloadBudget}
}

// Timeout implements river.Worker: a whole download of the budget may take
// minutes; a ranged read takes seconds.
func (w *ExtractPreviewWorker) Timeout(*river.Job[hoard.ExtractPreviewArgs]) time.Duration {
	return 30 * time.Minute
}

// Work implements river.Worker. A failure is noted on the extraction,
// the final one (bad input at once) makes it FAILED; the user waits on the
// page, so retries come soon (its policy).
func (w *ExtractPreviewWorker) Work(ctx context.Context, job *river.Job[hoard.ExtractPreviewArgs]) error {
	db := w.db
	x, err := db.StartPreviewExtraction(ctx, job.Args.ExtractionID)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return nil // finished by an earlier attempt, or the package is gone
	}
	if err != nil {
		return w.finish(ctx, job, fmt.Errorf("extract preview %d: %w", job.Args.ExtractionID, err), nil)
	}
	res := &fetchResult{}
	thumb, err := w.extractPreview(ctx, x, res)
	if err == nil {
		err = completeTx(ctx, db, job, func(tx *store.DB, _ *river.Client[pgx.Tx]) error {
			ok, err := tx.FinishPreviewExtraction(ctx, x.ID, hoard.ExtractionDone, res.method, res.bytes(), "")
			if err != nil || !ok {
				return err
			}
			return tx.SetPackagePreview(ctx, x.PackageID, thumb, 0)
		})
		if err == nil {
			w.log.Info("preview extracted", "package", x.PackageID, "extraction", x.ID, "method", res.method,
				"downloaded", res.bytes(), "thumbnail", len(thumb))
			return nil
		}
	}
	return w.finish(ctx, job, fmt.Errorf("extract preview %d of package %d: %w", x.ID, x.PackageID, err),
		&extractionSubject{db: db, x: x, res: res})
}

// extractionSubject is a preview extraction as the subject of its job's
// failures: a failed attempt is noted on it, the final one makes it
// FAILED, with what the download did and the message for the page.
type extractionSubject struct {
	db  *store.DB
	x   *hoard.PreviewExtraction
	res *fetchResult
}

// failed implements subject.
func (s *extractionSubject) failed(ctx context.Context, f failure) error {
	msg := extractionMessage(f.err)
	if !f.final {
		return s.db.NotePreviewExtraction(ctx, s.x.ID, s.res.method, s.res.bytes(),
			fmt.Sprintf("Attempt %d failed, retrying: %s", f.attempt, msg))
	}
	_, err := s.db.FinishPreviewExtraction(ctx, s.x.ID, hoard.ExtractionFailed, s.res.method, s.res.bytes(), msg)
	return err
}

// extractionMessage is what the package page shows of a failure.
func extractionMessage(err error) string {
	msg := hoard.ErrorMessage(err)
	if hoard.ErrorCode(err) == hoard.EINTERNAL {
		msg = err.Error() // curators see what broke
	}
	return truncate(msg, 1000)
}

// fetchResult is what an attempt learnt about its download, also on
// failure.
type fetchResult struct {
	method     string
	mu         sync.Mutex
	downloaded int64
}

func (r *fetchResult) add(n int64) {
	r.mu.Lock()
	r.downloaded += n
	r.mu.Unlock()
}

func (r *fetchResult) bytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.downloaded
}

// invalidArchive marks failures that no retry can fix: the entry or the
// image itself is the problem.
func invalidArchive(err error) error {
	if big, ok := errors.AsType[*archive.ImageTooLargeError](err); ok {
		return hoard.WrapError(hoard.EINVALID, err, big.Message())
	}
	for _, e := range []error{archive.ErrEntryNotFound, archive.ErrEncrypted, archive.ErrTooLarge, archive.ErrSolidBudget,
		archive.ErrNotExtracted, archive.ErrUnsupportedMethod, archive.ErrNotImage, archive.ErrImageTooLarge, archive.ErrWebPTooLarge} {
		if errors.Is(err, e) {
			return hoard.WrapError(hoard.EINVALID, err, "The image could not be extracted: "+e.Error()+".")
		}
	}
	return err
}

// extractPreview fetches the entry of x and returns its thumbnail.
func (w *ExtractPreviewWorker) extractPreview(ctx context.Context, x *hoard.PreviewExtraction, res *fetchResult) ([]byte, error) {
	db := w.db
	p, err := db.FindPackageByID(ctx, x.PackageID)
	if err != nil {
		return nil, err
	}
	f, err := db.FindPackageFileByPath(ctx, p.ID, x.EntryPath)
	if hoard.ErrorCode(err) == hoard.ENOTFOUND {
		return nil, hoard.Errorf(hoard.EINVALID, "The archive has no entry %q.", x.EntryPath)
	}
	if err != nil {
		return nil, err
	}
	if !archive.IsImageName(f.Path) {
		return nil, hoard.Errorf(hoard.EINVALID, "%q is not a JPEG, PNG, GIF or WebP image.", f.Path)
	}
	if f.Size > archive.MaxPreviewSize {
		return nil, hoard.Errorf(hoard.EINVALID, "%q is larger than %d MiB.", f.Path, archive.MaxPreviewSize>>20)
	}
	at := archiveType(p.ArchiveType)
	if at == archive.Document {
		return nil, hoard.Errorf(hoard.EINVALID, "%s is a document, not an archive.", p.FileName)
	}
	rf, err := w.remotePackage(ctx, p, res)
	if err != nil {
		return nil, err
	}
	var data []byte
	whole := at != archive.ZIP
	if at == archive.ZIP {
		res.method = methodRanged
		data, err = archive.ReadZipEntry(ctx, rf, rf.size, f.Path, archive.ExtractOptions{MaxInput: RangedPreviewBudget, NameKey: storedEntryPath})
		if errors.Is(err, archive.ErrNoRange) {
			w.log.Info("zip index unusable; downloading the whole archive", "package", p.ID, "err", err)
			whole = true
		}
	}
	if whole {
		res.method = methodWhole
		data, err = w.extractWhole(ctx, rf, at, f.Path)
	}
	if err != nil {
		return nil, invalidArchive(err)
	}
	thumb, err := archive.MakeThumbnail(ctx, data, archive.ThumbnailOptions{})
	if err != nil {
		return nil, invalidArchive(err)
	}
	return thumb, nil
}

// extractWhole downloads every part of rf into a fresh spool directory
// (files named by part number only) within the download budget and
// extracts the entry with archive.Extract.
func (w *ExtractPreviewWorker) extractWhole(ctx context.Context, rf *remoteFile, at archive.Type, entry string) ([]byte, error) {
	budget := w.budget
	if budget <= 0 {
		budget = DefaultPreviewDownloadBudget
	}
	if rf.size > budget {
		return nil, hoard.Errorf(hoard.EINVALID, "The archive (%d MiB) is larger than the %d MiB that may be downloaded to extract a preview.",
			rf.size>>20, budget>>20)
	}
	spool := w.spool.dir
	if spool == "" {
		spool = filepath.Join(os.TempDir(), "hoard-spool")
	}
	if err := os.MkdirAll(spool, 0o700); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	dir, err := os.MkdirTemp(spool, "preview-*")
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	defer w.spool.remove(dir)
	paths := make([]string, len(rf.parts))
	for i := range rf.parts {
		paths[i] = filepath.Join(dir, fmt.Sprintf("part-%03d", i+1))
		if err := rf.downloadPart(ctx, i, paths[i]); err != nil {
			return nil, fmt.Errorf("download part %d of %d: %w", i+1, len(rf.parts), err)
		}
	}
	return archive.Extract(ctx, at, paths, entry, archive.ExtractOptions{NameKey: storedEntryPath})
}

// remotePackage resolves the package's destination messages into a
// remoteFile over the concatenation of their documents.
func (w *ExtractPreviewWorker) remotePackage(ctx context.Context, p *hoard.Package, res *fetchResult) (*remoteFile, error) {
	if p.DestChannelID == 0 || len(p.DestMessageIDs) == 0 {
		return nil, hoard.Errorf(hoard.EINVALID, "%s is not published to the destination channel, so its bytes cannot be read.", p.FileName)
	}
	src, err := w.platform.destinationReader(ctx, p.DestChannelID)
	if err != nil {
		return nil, err
	}
	acc, peer := src.account, src.peer
	ids := make([]int, len(p.DestMessageIDs))
	for i, id := range p.DestMessageIDs {
		ids[i] = int(id)
	}
	msgs, err := acc.Messages(ctx, peer, ids)
	if err != nil {
		return nil, fmt.Errorf("read destination messages of %s: %w", p.FileName, err)
	}
	byID := make(map[int]messenger.Message, len(msgs))
	for _, msg := range msgs {
		byID[msg.ID] = msg
	}
	rf := &remoteFile{ctx: ctx, account: acc, peer: peer, res: res, budget: RangedPreviewBudget}
	for _, id := range ids {
		msg, ok := byID[id]
		if !ok || msg.Document == nil {
			return nil, hoard.Errorf(hoard.EINVALID, "Destination message %d of %s is missing: repair the package first.", id, p.FileName)
		}
		rf.parts = append(rf.parts, remotePart{msg: msg, start: rf.size})
		rf.size += msg.Document.Size
	}
	if rf.size != p.FileSize {
		return nil, hoard.Errorf(hoard.EINVALID, "The destination parts of %s hold %d bytes, the package %d: repair the package first.",
			p.FileName, rf.size, p.FileSize)
	}
	return rf, nil
}

// remotePart is one destination message and where its document starts in
// the concatenation.
type remotePart struct {
	msg   messenger.Message
	start int64
}

// remoteFile is the concatenation of a package's destination documents as
// an io.ReaderAt: a read that misses the bytes fetched so far downloads from
// its offset on (one chunk in flight) and stops as soon as the range is
// covered. Fetched bytes are kept, so the small reads of a ZIP's tail,
// directory and local header cost one chunk each at most. Total downloads
// are capped by budget.
type remoteFile struct {
	ctx     context.Context
	account messenger.Account
	peer    messenger.Channel
	parts   []remotePart
	size    int64
	res     *fetchResult
	budget  int64

	mu sync.Mutex // held by ReadAt, across its downloads
	// wmu guards segs and fetched against a download's writer goroutines.
	wmu     sync.Mutex
	segs    []segment
	fetched int64
}

// segment is a run of fetched bytes at a logical offset.
type segment struct {
	off  int64
	data []byte
}

var (
	errEnough       = errors.New("range covered")
	errRangedBudget = errors.New("ranged download budget exceeded")
)

// ReadAt implements io.ReaderAt.
func (r *remoteFile) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("remote file: negative offset")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for n < len(b) {
		pos := off + int64(n)
		if pos >= r.size {
			return n, io.EOF
		}
		if m := r.copyCached(b[n:], pos); m > 0 {
			n += m
			continue
		}
		end := min(off+int64(len(b)), r.size)
		if err := r.fetch(pos, end); err != nil {
			return n, err
		}
		if r.copyCached(b[n:n+1], pos) == 0 {
			return n, fmt.Errorf("remote file: download at %d returned no bytes", pos)
		}
	}
	return n, nil
}

// copyCached copies fetched bytes at pos into b and returns how many.
func (r *remoteFile) copyCached(b []byte, pos int64) int {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	for _, s := range r.segs {
		if pos >= s.off && pos < s.off+int64(len(s.data)) {
			return copy(b, s.data[pos-s.off:])
		}
	}
	return 0
}

// fetch downloads the logical range [from, to) of the part holding from,
// up to its end.
func (r *remoteFile) fetch(from, to int64) error {
	i := sort.Search(len(r.parts), func(i int) bool { return i+1 == len(r.parts) || r.parts[i+1].start > from })
	part := r.parts[i]
	partEnd := part.start + part.msg.Document.Size
	to = min(to, partEnd)
	w := &segmentWriter{r: r, base: part.start, want: to - part.start}
	err := r.account.Download(r.ctx, messenger.DownloadRequest{Channel: r.peer, MessageID: part.msg.ID,
		Document: *part.msg.Document, Offset: from - part.start, Threads: 1}, w)
	if err == nil || errors.Is(err, errEnough) {
		return nil
	}
	return fmt.Errorf("ranged download of %s at %d: %w", part.msg.Document.FileName, from-part.start, err)
}

// segmentWriter keeps what a download writes as segments of its remote
// file and stops the download once want bytes of the document are there.
type segmentWriter struct {
	r    *remoteFile
	base int64 // logical offset of the document
	want int64 // document offset up to which bytes are needed
}

// WriteAt implements io.WriterAt.
func (w *segmentWriter) WriteAt(p []byte, off int64) (int, error) {
	r := w.r
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.fetched += int64(len(p))
	r.res.add(int64(len(p)))
	if r.fetched > r.budget {
		return 0, errRangedBudget
	}
	r.segs = append(r.segs, segment{off: w.base + off, data: bytes.Clone(p)})
	if off+int64(len(p)) >= w.want {
		return len(p), errEnough
	}
	return len(p), nil
}

// downloadPart downloads part i whole into a new file at path, counting the
// bytes.
func (r *remoteFile) downloadPart(ctx context.Context, i int, path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	doc := *r.parts[i].msg.Document
	err = r.account.Download(ctx, messenger.DownloadRequest{Channel: r.peer, MessageID: r.parts[i].msg.ID, Document: doc},
		countingWriterAt{w: f, res: r.res})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Size() != doc.Size {
		return fmt.Errorf("downloaded %d bytes of %d", st.Size(), doc.Size)
	}
	return nil
}

// countingWriterAt counts the bytes written through it.
type countingWriterAt struct {
	w   io.WriterAt
	res *fetchResult
}

func (c countingWriterAt) WriteAt(p []byte, off int64) (int, error) {
	n, err := c.w.WriteAt(p, off)
	c.res.add(int64(n))
	return n, err
}
