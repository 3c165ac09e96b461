package telegram

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gotd/td/telegram/uploader"
	"github.com/gotd/td/tg"
	"github.com/gotd/td/tgerr"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
)

// chunkSize is the download chunk: the platform maximum, aligned to 1 MiB
// boundaries as the rules require.
const chunkSize = 1 << 20

// errStall marks a chunk that made no progress within StallTimeout.
var errStall = errors.New("download stalled")

// Download implements messenger.Account: Threads chunks of 1 MiB in flight
// over the connection pool of the file's DC (a FILE_MIGRATE_X answer is
// followed to the DC it names), written to w at their offsets. A stalled attempt is
// aborted and resumed from the last contiguous good offset; an expired file
// reference is refreshed by re-fetching the message. Short flood waits are
// slept through in place. Errors are *messenger.DownloadError with the
// resume offset.
func (a *Account) Download(ctx context.Context, req messenger.DownloadRequest, w io.WriterAt) error {
	return a.files().download(ctx, req, w)
}

// files is the account's file reader: its connection, configuration and
// a refresh of file references by re-fetching the message.
func (a *Account) files() *fileReader {
	return &fileReader{conn: a.conn, cfg: &a.cfg, refetch: a.refetchDocument}
}

// fileReader downloads documents over a client's connection pools; the
// account and the bot share it.
type fileReader struct {
	conn *conn
	cfg  *Config
	// refetch re-reads a message for a fresh file reference.
	refetch func(ctx context.Context, ch messenger.Channel, msgID int) (*messenger.Document, error)
}

// download is messenger.Account's Download (see there).
func (a *fileReader) download(ctx context.Context, req messenger.DownloadRequest, w io.WriterAt) error {
	doc := req.Document
	threads := req.Threads
	if threads <= 0 {
		threads = 4
	}
	done := req.Offset - req.Offset%chunkSize
	if done < 0 {
		done = 0
	}
	if req.Limit > 0 {
		// Fetch (and check) only the chunks up to the one holding the
		// Limit-th byte.
		doc.Size = min(doc.Size, (req.Limit+chunkSize-1)/chunkSize*chunkSize)
	}
	stalls, refreshes := 0, 0
	dc := newFileDC(doc.DCID)
	for {
		err := a.downloadFrom(ctx, &doc, dc, w, threads, &done, req.Progress)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, errStall) && stalls < 5:
			stalls++
			a.cfg.Logger.Warn("telegram: download stalled, resuming", "document", doc.ID, "offset", done, "stall_timeout", a.cfg.StallTimeout)
			continue
		case isFileRefError(err) && refreshes < 3:
			refreshes++
			fresh, ferr := a.refetch(ctx, req.Channel, req.MessageID)
			if ferr != nil {
				return &messenger.DownloadError{Offset: done, Err: ferr}
			}
			doc.FileReference = fresh.FileReference
			continue
		}
		return &messenger.DownloadError{Offset: done, Err: mapErr(fmt.Sprintf("download document %d", doc.ID), err)}
	}
}

// downloadFrom runs one attempt from *done on, asking DC dc; *done
// advances over the contiguous prefix of finished chunks.
func (a *fileReader) downloadFrom(ctx context.Context, doc *messenger.Document, dc *fileDC, w io.WriterAt, threads int, done *int64, progress func(int64)) error {
	loc := &tg.InputDocumentFileLocation{ID: doc.ID, AccessHash: doc.AccessHash, FileReference: doc.FileReference}
	if *done >= doc.Size {
		return nil
	}
	chunks := (doc.Size + chunkSize - 1) / chunkSize
	fetch := func(ctx context.Context, c int64, _ []byte) error {
		off := c * chunkSize
		data, err := a.chunk(ctx, dc, loc, off)
		if err != nil {
			return err
		}
		if want := min(int64(chunkSize), doc.Size-off); int64(len(data)) != want {
			return fmt.Errorf("chunk at %d: got %d bytes, want %d", off, len(data), want)
		}
		if _, err := w.WriteAt(data, off); err != nil {
			return fmt.Errorf("write at %d: %w", off, err)
		}
		return nil
	}
	// No buffer per goroutine: each answer's bytes are already a fresh
	// slice of the chunk's size, handed to w as they are.
	return forEachInOrder(ctx, *done/chunkSize, chunks, threads, nil, fetch,
		func(next int64) {
			*done = min(next*chunkSize, doc.Size)
			if progress != nil {
				progress(*done)
			}
		})
}

// chunk fetches one chunk from DC dc. Each attempt has StallTimeout to
// answer; a short flood wait is slept through (outside that timer) and the
// same chunk asked again; FILE_MIGRATE_X moves dc to DC X (a few times at
// most) and asks there. The bytes returned are the answer's own (gotd
// decodes them into a slice of their own), not shared with anything.
func (a *fileReader) chunk(ctx context.Context, dc *fileDC, loc tg.InputFileLocationClass, off int64) ([]byte, error) {
	migrations := 0
	for attempt := 0; ; attempt++ {
		res, stalled, err := a.chunkAttempt(ctx, dc.get(), loc, off)
		if to, ok := fileMigrate(err); ok && migrations < maxFileMigrations {
			migrations++
			a.cfg.Logger.Debug("telegram: file lives on another DC", "from", dc, "to", to)
			dc.set(to)
			continue
		}
		if fw, ok := messenger.AsFloodWait(err); ok && fw.RetryAfter <= a.cfg.MaxInlineFloodWait && attempt < 5 {
			a.cfg.Logger.Info("telegram: flood wait on a chunk, retrying in place", "offset", off, "wait", fw.RetryAfter)
			t := time.NewTimer(fw.RetryAfter)
			select {
			case <-t.C:
				continue
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			}
		}
		if err != nil {
			if stalled {
				return nil, fmt.Errorf("chunk at %d: %w", off, errStall)
			}
			return nil, err
		}
		f, ok := res.(*tg.UploadFile)
		if !ok {
			return nil, fmt.Errorf("chunk at %d: unexpected answer %T (CDN redirects are not supported)", off, res)
		}
		return f.Bytes, nil
	}
}

// maxFileMigrations bounds how often one chunk follows FILE_MIGRATE_X: a
// file moves rarely, and a loop between DCs must end in an error.
const maxFileMigrations = 3

// chunkAttempt asks DC dc once for the chunk at off, within StallTimeout;
// stalled reports an attempt that timed out.
func (a *fileReader) chunkAttempt(ctx context.Context, dc int, loc tg.InputFileLocationClass, off int64) (tg.UploadFileClass, bool, error) {
	pool, err := a.conn.pools.get(ctx, dc)
	if err != nil {
		return nil, false, err
	}
	rctx, cancel := context.WithTimeout(ctx, a.cfg.StallTimeout)
	defer cancel()
	res, err := pool.chunks.UploadGetFile(rctx, &tg.UploadGetFileRequest{Location: loc, Offset: off, Limit: chunkSize})
	return res, ctx.Err() == nil && rctx.Err() != nil, err
}

// DownloadThumbnail implements messenger.Account: the bytes of the largest
// size of msg's photo.
func (a *Account) DownloadThumbnail(ctx context.Context, ch messenger.Channel, msg messenger.Message) ([]byte, error) {
	if msg.Photo == nil {
		return nil, hoard.Errorf(hoard.EINVALID, "message %d has no photo", msg.ID)
	}
	ph := *msg.Photo
	for attempt := 0; ; attempt++ {
		dc := newFileDC(ph.DCID)
		loc := &tg.InputPhotoFileLocation{ID: ph.ID, AccessHash: ph.AccessHash, FileReference: ph.FileReference, ThumbSize: ph.Thumb}
		var out bytes.Buffer
		var err error
		stalls := 0
		for off := int64(0); ; {
			var data []byte
			data, err = a.files().chunk(ctx, dc, loc, off)
			if errors.Is(err, errStall) && stalls < 5 {
				stalls++ // ask for the same chunk again, as Download does
				continue
			}
			if err != nil {
				break
			}
			out.Write(data)
			if len(data) < chunkSize {
				return out.Bytes(), nil
			}
			off += chunkSize
		}
		if isFileRefError(err) && attempt == 0 {
			msgs, ferr := a.Messages(ctx, ch, []int{msg.ID})
			if ferr != nil {
				return nil, fmt.Errorf("refresh photo reference: %w", ferr)
			}
			if len(msgs) == 0 || msgs[0].Photo == nil {
				return nil, fmt.Errorf("refresh photo of message %d: %w", msg.ID, messenger.ErrNotFound)
			}
			ph = *msgs[0].Photo
			continue
		}
		return nil, mapErr(fmt.Sprintf("download photo of message %d", msg.ID), err)
	}
}

// bigFileThreshold is where the platform switches from saveFilePart (with an
// MD5) to saveBigFilePart.
const bigFileThreshold = 10 << 20

// Upload implements messenger.Account: 512 KiB parts over the transfer pool
// (short flood waits slept through per part), then sendMedia. Files above
// 10 MiB are uploaded part by part here so that a failed upload (a long
// flood wait, a lost connection) resumes from the parts already stored
// instead of restarting from byte 0.
func (a *Account) Upload(ctx context.Context, req messenger.UploadRequest) (int, error) {
	size := req.Data.Size()
	if size > messenger.MaxUploadSize(req.Premium) {
		return 0, fmt.Errorf("upload %q (%d bytes): %w", req.FileName, size, messenger.ErrTooLarge)
	}
	threads := req.Threads
	if threads <= 0 {
		threads = 4
	}
	for restarted := false; ; restarted = true {
		var (
			file   tg.InputFileClass
			resume messenger.UploadResume
		)
		pool, err := a.conn.pools.get(ctx, 0)
		switch {
		case err != nil:
		case size > bigFileThreshold:
			file, resume, err = a.uploadBig(ctx, pool.transfer, req, size, threads)
		default:
			up := uploader.NewUploader(pool.transfer).WithPartSize(messenger.UploadPartSize).WithThreads(threads)
			file, err = up.Upload(ctx, uploader.NewUpload(req.FileName, io.NewSectionReader(req.Data, 0, size), size))
		}
		if err != nil {
			err = mapErr(fmt.Sprintf("upload %q", req.FileName), err)
			if size > bigFileThreshold {
				return 0, &messenger.UploadError{Resume: resume, Err: err}
			}
			return 0, err
		}
		id, err := a.post(ctx, req, file, size, resume)
		if size > bigFileThreshold && !restarted && tgerr.Is(err, "FILE_PART_MISSING") {
			// The platform no longer holds parts stored before (they live
			// minutes to hours): the whole file again, under a new id.
			a.cfg.Logger.Warn("telegram: uploaded parts expired; uploading the file again", "file", req.FileName, "err", err)
			req.Resume = nil
			continue
		}
		return id, err
	}
}

// post sends an uploaded file to the request's channel as a document and
// returns the message id. A failure of a big file other than a refusal
// (400) is an *UploadError carrying resume: its parts are stored, only
// sendMedia needs repeating.
func (a *Account) post(ctx context.Context, req messenger.UploadRequest, file tg.InputFileClass, size int64, resume messenger.UploadResume) (int, error) {
	mime := req.MimeType
	if mime == "" {
		mime = "application/octet-stream"
	}
	rid := randomID()
	upd, err := a.conn.api.MessagesSendMedia(ctx, &tg.MessagesSendMediaRequest{
		Peer: inputPeer(req.Channel),
		Media: &tg.InputMediaUploadedDocument{File: file, MimeType: mime, ForceFile: true,
			Attributes: []tg.DocumentAttributeClass{&tg.DocumentAttributeFilename{FileName: req.FileName}}},
		Message:  req.Caption,
		RandomID: rid,
	})
	if err != nil {
		err = mapErr(fmt.Sprintf("post %q", req.FileName), err)
		if size > bigFileThreshold && !tgerr.IsCode(err, 400) {
			// Parts are stored: only sendMedia needs repeating.
			return 0, &messenger.UploadError{Resume: resume, Err: err}
		}
		return 0, err
	}
	id, ok := sentMessageID(upd, rid)
	if !ok {
		return 0, fmt.Errorf("post %q: no message id in the answer", req.FileName)
	}
	return id, nil
}

// uploadBig sends the parts of a big file over api (the home DC's pool)
// from the resume point on and returns the resume point reached (the
// contiguous prefix of stored parts).
func (a *Account) uploadBig(ctx context.Context, api *tg.Client, req messenger.UploadRequest, size int64, threads int) (tg.InputFileClass, messenger.UploadResume, error) {
	const partSize = messenger.UploadPartSize
	total := int((size + partSize - 1) / partSize)
	resume := messenger.UploadResume{FileID: randomID()}
	if r := req.Resume; r != nil && r.FileID != 0 && r.PartsDone >= 0 && r.PartsDone <= total {
		resume = *r
	}
	fileID := resume.FileID
	send := func(ctx context.Context, item int64, buf []byte) error {
		p := int(item)
		off := item * partSize
		n := int(min(partSize, size-off))
		if _, err := req.Data.ReadAt(buf[:n], off); err != nil && !(errors.Is(err, io.EOF) && n > 0) {
			return fmt.Errorf("read part %d: %w", p, err)
		}
		_, err := api.UploadSaveBigFilePart(ctx, &tg.UploadSaveBigFilePartRequest{
			FileID: fileID, FilePart: p, FileTotalParts: total, Bytes: buf[:n],
		})
		if err != nil {
			return fmt.Errorf("part %d: %w", p, err)
		}
		return nil
	}
	err := forEachInOrder(ctx, int64(resume.PartsDone), int64(total), threads, func() []byte { return make([]byte, partSize) }, send,
		func(next int64) {
			resume.PartsDone = int(next)
			if req.Progress != nil {
				req.Progress(resume)
			}
		})
	if err != nil {
		return nil, resume, err
	}
	return &tg.InputFileBig{ID: resume.FileID, Parts: total, Name: req.FileName}, resume, nil
}
