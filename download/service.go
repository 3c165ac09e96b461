// Package download serves the bytes of published packages from the
// destination channel to browsers, download managers and WebDAV clients:
// a package hoard split is joined back, a multi-volume set is served
// volume by volume, and any byte range costs only the 1 MiB chunks it
// covers. Bytes come through a messenger.FileReader — the bot, which
// administers the destination channel, in a session of the web process's
// own, because an account's session is held by one worker process at a
// time — and recently served chunks are kept in an on-disk Cache.
// Memory stays flat in the file's size: a few chunks in flight per
// download.
package download

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
)

// Service opens packages for download.
type Service struct {
	DB *store.DB
	// Reader gives the platform client that reads the destination
	// channel's posts, connected on first use; an error says why
	// downloads cannot start (no bot configured, say).
	Reader func(ctx context.Context) (messenger.FileReader, error)
	// Cache keeps served chunks (nil: none).
	Cache *Cache
	// Ahead is how many chunks one download fetches at once (default 4).
	Ahead int
	// PerUser is how many downloads one user may run at once (default 3).
	PerUser int
	// Observe, when set, is told of every chunk served: its bytes and
	// whether the cache had it.
	Observe func(bytes int, cached bool)
	Log     *slog.Logger

	mu       sync.Mutex
	active   map[int64]int
	docs     map[chunkKey]messenger.Document // documents by post (index 0)
	channels map[int64]int64                 // platform ids of channel rows
}

// File is one file a package is served as, known without asking the
// platform: Part 0 is the package whole (its parts joined), N its N-th
// volume.
type File struct {
	Name string
	Size int64
	Part int
}

// ErrBusy is returned by Begin when the user runs PerUser downloads.
var ErrBusy = hoard.Errorf(hoard.ERATELIMITED, "You have the most downloads running at once; wait for one to finish.")

// Begin counts a download of user against their limit; call end when it
// is over.
func (s *Service) Begin(userID int64) (end func(), err error) {
	limit := s.PerUser
	if limit <= 0 {
		limit = 3
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == nil {
		s.active = map[int64]int{}
	}
	if s.active[userID] >= limit {
		return nil, ErrBusy
	}
	s.active[userID]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.active[userID]--; s.active[userID] <= 0 {
				delete(s.active, userID)
			}
		})
	}, nil
}

// splitName matches the name of a piece hoard cut a file into: the
// file's name and a number of at least three digits.
var splitName = regexp.MustCompile(`^(.*)\.(\d{3,})$`)

// joined reports whether parts are pieces hoard cut fileName into (served
// joined) rather than volumes of a set (served one by one).
func joined(parts []hoard.PackagePart, fileName string) bool {
	for i, p := range parts {
		m := splitName.FindStringSubmatch(p.Name)
		if m == nil || m[1] != fileName {
			return false
		}
		if n, err := strconv.Atoi(m[2]); err != nil || n != i+1 {
			return false
		}
	}
	return true
}

// Files lists what pkg is served as, from the database alone: the package
// whole, or, for a set published as its volumes, each volume (Part N).
// Until a first download learned its posts, a package of several posts is
// listed whole.
func (s *Service) Files(pkg *hoard.Package, parts []hoard.PackagePart) []File {
	if len(parts) <= 1 || joined(parts, pkg.FileName) {
		return []File{{Name: pkg.FileName, Size: pkg.FileSize}}
	}
	out := make([]File, len(parts))
	for i, p := range parts {
		out[i] = File{Name: p.Name, Size: p.Size, Part: p.PartNo}
	}
	return out
}

// Open returns a served file of pkg: part 0 is the package whole — the
// concatenation of its posts, which is the original file when hoard split
// it, or a ZIP of the volumes of a set published as its volumes — and N
// its N-th post. The posts are learned from the platform the first time
// (one request) and kept.
func (s *Service) Open(ctx context.Context, pkg *hoard.Package, part int) (*Content, error) {
	if pkg.DestChannelID == 0 || len(pkg.DestMessageIDs) == 0 {
		return nil, hoard.Errorf(hoard.ENOTFOUND, "%s is not published in the destination channel yet, so there is nothing to download.", pkg.FileName)
	}
	parts, err := s.parts(ctx, pkg)
	if err != nil {
		return nil, err
	}
	return s.open(ctx, pkg, parts, part)
}

// open is Open over the package's parts, already known.
func (s *Service) open(ctx context.Context, pkg *hoard.Package, parts []hoard.PackagePart, part int) (*Content, error) {
	if part < 0 || part > len(parts) {
		return nil, hoard.Errorf(hoard.ENOTFOUND, "%s has no part %d (it has %d).", pkg.FileName, part, len(parts))
	}
	if part == 0 && len(parts) > 1 && !joined(parts, pkg.FileName) {
		return s.volumesArchive(ctx, pkg, parts)
	}
	channel, err := s.platformChannel(ctx, pkg.DestChannelID)
	if err != nil {
		return nil, err
	}
	srcs := make([]*partSource, len(parts))
	for i, p := range parts {
		srcs[i] = &partSource{svc: s, channelID: channel, messageID: p.DestMessageID, name: p.Name, size: p.Size}
	}
	name := pkg.FileName
	if part > 0 {
		srcs, name = srcs[part-1:part], parts[part-1].Name
	}
	var size int64
	for _, p := range srcs {
		size += p.size
	}
	return NewContent(name, size, packageETag(pkg, part), pkg.CreatedAt, func(ctx context.Context, off int64) (io.ReadCloser, error) {
		r := openStream(ctx, srcs, off, s.ahead())
		if off != 0 {
			return r, nil
		}
		return &checksummer{r: r, size: size, done: func(crc uint32) {
			if err := s.DB.RecordPackageChecksum(context.WithoutCancel(ctx), pkg.ID, part, pkg.DestMessageIDs, crc); err != nil {
				s.log().Warn("download: keep a checksum", "package", pkg.ID, "err", err)
			}
		}}, nil
	}), nil
}

// parts returns the package's posts: kept, or learned from the platform.
// The reader is connected first either way, so that a download that
// cannot go on says so before its first byte.
func (s *Service) parts(ctx context.Context, pkg *hoard.Package) ([]hoard.PackagePart, error) {
	if _, err := s.Reader(ctx); err != nil {
		return nil, err
	}
	parts, err := s.DB.PackageParts(ctx, pkg)
	if err != nil || parts != nil {
		return parts, err
	}
	return s.learnParts(ctx, pkg)
}

// volumesArchive is the ZIP of the volumes of a set.
func (s *Service) volumesArchive(ctx context.Context, pkg *hoard.Package, parts []hoard.PackagePart) (*Content, error) {
	stem := pkg.FileName
	if i := strings.LastIndexByte(stem, '.'); i > 0 {
		stem = stem[:i]
	}
	return s.Archive(ctx, stem, []hoard.Package{*pkg})
}

func (s *Service) ahead() int {
	if s.Ahead <= 0 {
		return 4
	}
	return s.Ahead
}

func (s *Service) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}

// packageETag is a strong tag of a served file: the content hash when
// there is one (the bytes are exactly those), else the posts it is read
// from.
func packageETag(pkg *hoard.Package, part int) string {
	tag := pkg.ContentHash
	if tag == "" {
		tag = "posts"
		for _, id := range pkg.DestMessageIDs {
			tag += "-" + strconv.FormatInt(id, 10)
		}
	}
	if part > 0 {
		tag += "-part" + strconv.Itoa(part)
	}
	return `"` + tag + `"`
}

// learnParts asks the platform what the package's posts hold (one
// request) and keeps it.
func (s *Service) learnParts(ctx context.Context, pkg *hoard.Package) ([]hoard.PackagePart, error) {
	reader, err := s.Reader(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]int, len(pkg.DestMessageIDs))
	for i, id := range pkg.DestMessageIDs {
		ids[i] = int(id)
	}
	channel, err := s.platformChannel(ctx, pkg.DestChannelID)
	if err != nil {
		return nil, err
	}
	msgs, err := reader.Posts(ctx, channel, ids)
	if err != nil {
		return nil, fmt.Errorf("read the posts of package %d: %w", pkg.ID, err)
	}
	byID := map[int]messenger.Message{}
	for _, m := range msgs {
		byID[m.ID] = m
	}
	parts := make([]hoard.PackagePart, len(ids))
	for i, id := range ids {
		m, ok := byID[id]
		if !ok || m.Document == nil {
			return nil, hoard.Errorf(hoard.ENOTFOUND, "Part %d of %s is gone from the destination channel; an administrator can repair the package.", i+1, pkg.FileName)
		}
		parts[i] = hoard.PackagePart{PartNo: i + 1, DestMessageID: int64(id), Name: m.Document.FileName, Size: m.Document.Size}
		s.rememberDoc(channel, int64(id), *m.Document)
	}
	if err := s.DB.RecordPackageParts(ctx, pkg.ID, parts); err != nil {
		return nil, err
	}
	return parts, nil
}

// platformChannel returns the platform's id of a channel row.
func (s *Service) platformChannel(ctx context.Context, channelID int64) (int64, error) {
	s.mu.Lock()
	id, ok := s.channels[channelID]
	s.mu.Unlock()
	if ok {
		return id, nil
	}
	ch, err := s.DB.FindChannelByID(ctx, channelID)
	if err != nil {
		return 0, fmt.Errorf("destination channel %d: %w", channelID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.channels == nil {
		s.channels = map[int64]int64{}
	}
	s.channels[channelID] = ch.PlatformID
	return ch.PlatformID, nil
}

// rememberDoc keeps a post's document for the chunks read soon after.
func (s *Service) rememberDoc(channelID, messageID int64, d messenger.Document) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.docs == nil || len(s.docs) > 10000 {
		s.docs = map[chunkKey]messenger.Document{}
	}
	s.docs[chunkKey{channelID: channelID, messageID: messageID}] = d
}

// document returns a post's document: remembered, or asked for.
func (s *Service) document(ctx context.Context, channelID, messageID int64) (messenger.Document, error) {
	s.mu.Lock()
	d, ok := s.docs[chunkKey{channelID: channelID, messageID: messageID}]
	s.mu.Unlock()
	if ok {
		return d, nil
	}
	reader, err := s.Reader(ctx)
	if err != nil {
		return d, err
	}
	msgs, err := reader.Posts(ctx, channelID, []int{int(messageID)})
	if err != nil {
		return d, fmt.Errorf("read post %d: %w", messageID, err)
	}
	if len(msgs) == 0 || msgs[0].Document == nil {
		return d, hoard.Errorf(hoard.ENOTFOUND, "A post of this package is gone from the destination channel; an administrator can repair the package.")
	}
	s.rememberDoc(channelID, messageID, *msgs[0].Document)
	return *msgs[0].Document, nil
}

// partSource is one destination post read chunk by chunk.
type partSource struct {
	svc       *Service
	channelID int64
	messageID int64
	name      string
	size      int64
}

// chunk returns chunk index of the post: from the cache, or from the
// platform (and then kept).
func (p *partSource) chunk(ctx context.Context, index int64) ([]byte, error) {
	key := chunkKey{channelID: p.channelID, messageID: p.messageID, index: index}
	want := int(min(chunkSize, p.size-index*chunkSize))
	if data, ok := p.svc.Cache.get(key); ok && len(data) == want {
		p.svc.observe(len(data), true)
		return data, nil
	}
	doc, err := p.svc.document(ctx, p.channelID, p.messageID)
	if err != nil {
		return nil, err
	}
	reader, err := p.svc.Reader(ctx)
	if err != nil {
		return nil, err
	}
	buf := &chunkBuffer{base: index * chunkSize, want: want}
	req := messenger.DownloadRequest{Channel: messenger.Channel{ID: p.channelID}, MessageID: int(p.messageID), Document: doc,
		Offset: index * chunkSize, Limit: index*chunkSize + 1, Threads: 1}
	if err := reader.Download(ctx, req, buf); err != nil {
		return nil, fmt.Errorf("download chunk %d of %q: %w", index, p.name, err)
	}
	if buf.n != want {
		return nil, fmt.Errorf("download chunk %d of %q: %d bytes, want %d", index, p.name, buf.n, want)
	}
	p.svc.Cache.put(key, buf.data)
	p.svc.observe(want, false)
	return buf.data, nil
}

func (s *Service) observe(n int, cached bool) {
	if s.Observe != nil {
		s.Observe(n, cached)
	}
}

// chunkBuffer receives one chunk written at its file offset. The
// platform's answer is the whole chunk in one write, a slice of its own:
// it is kept as it is, not copied.
type chunkBuffer struct {
	base int64
	want int
	data []byte
	n    int
}

func (b *chunkBuffer) WriteAt(p []byte, off int64) (int, error) {
	at := off - b.base
	if at < 0 || at+int64(len(p)) > int64(b.want) {
		return 0, fmt.Errorf("chunk write at %d of %d bytes: outside the chunk at %d", off, len(p), b.base)
	}
	if b.data == nil && at == 0 && len(p) == b.want {
		b.data, b.n = p, len(p)
		return len(p), nil
	}
	if b.data == nil {
		b.data = make([]byte, b.want)
	}
	copy(b.data[at:], p)
	b.n = max(b.n, int(at)+len(p))
	return len(p), nil
}

// checksummer computes the CRC-32 of a file read from its start and
// reports it once the last byte was read.
type checksummer struct {
	r    io.ReadCloser
	size int64
	read int64
	crc  uint32
	done func(uint32)
}

func (c *checksummer) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.crc = crc32.Update(c.crc, crc32.IEEETable, b[:n])
	c.read += int64(n)
	if c.read == c.size && c.done != nil && (err == nil || errors.Is(err, io.EOF)) {
		c.done(c.crc)
		c.done = nil
	}
	return n, err
}

func (c *checksummer) Close() error { return c.r.Close() }
