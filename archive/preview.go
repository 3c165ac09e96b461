package archive

import (
	"archive/zip"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/bodgit/sevenzip"
	"github.com/nwaples/rardecode/v2"
)

// Preview size bounds used by ChoosePreview.
const (
	MinPreviewSize = 4 << 10
	MaxPreviewSize = 10 << 20
)

var imageExts = map[string]bool{".jpg": true, ".jpeg": true, ".png": true, ".webp": true, ".gif": true}

var previewWords = []string{"cover", "preview", "thumb", "render", "title", "promo", "poster"}

// IsImageName reports whether name has an image extension usable as a
// preview (jpg, jpeg, png, webp, gif).
func IsImageName(name string) bool { return imageExts[strings.ToLower(path.Ext(name))] }

// previewScore ranks a preview candidate: lower is better.
func previewScore(e Entry) (score int, ok bool) {
	if e.IsDir || e.Encrypted || !IsImageName(e.Path) || e.Size > MaxPreviewSize {
		return 0, false
	}
	p := strings.ToLower(strings.ReplaceAll(e.Path, `\`, "/"))
	base := path.Base(p)
	// macOS resource forks and hidden files are not images.
	if strings.HasPrefix(base, "._") || strings.Contains(p, "__macosx/") {
		return 0, false
	}
	score = 100
	for _, w := range previewWords {
		if strings.Contains(base, w) {
			score = 0
			break
		}
	}
	if score != 0 && (strings.Contains(p, "preview") || strings.Contains(p, "render")) {
		score = min(score, 20) // in a "previews/" or "renders/" folder
	}
	score += 10 * strings.Count(strings.Trim(p, "/"), "/") // shallow paths first
	if e.Size >= 0 && e.Size < MinPreviewSize {
		score += 500 // icons and thumbnails of thumbnails: last resort
	}
	if strings.HasSuffix(base, ".gif") {
		score += 5
	}
	return score, true
}

// ChoosePreview picks the best preview image among listed entries: image
// extensions only, names with cover/preview/thumb/render first, shallow paths
// before deep ones, sizes between MinPreviewSize and MaxPreviewSize before
// tiny ones (larger than MaxPreviewSize never). Ties break on the larger
// size, then the path, so the choice is deterministic.
func ChoosePreview(entries []Entry) (Entry, bool) {
	best, bestScore, found := Entry{}, 0, false
	for _, e := range entries {
		s, ok := previewScore(e)
		if !ok {
			continue
		}
		if !found || s < bestScore || s == bestScore && (e.Size > best.Size || e.Size == best.Size && e.Path < best.Path) {
			best, bestScore, found = e, s, true
		}
	}
	return best, found
}

// ExtractOptions bounds the extraction of one entry.
type ExtractOptions struct {
	// MaxSize is the largest entry accepted (MaxPreviewSize by default).
	MaxSize int64
	// MaxDecoded is the budget of bytes decoded before the entry in its
	// solid block (64 MiB by default): a preview behind gigabytes of solid
	// data is refused up front instead of stalling the worker.
	MaxDecoded int64
	// MaxInput caps the bytes read from the archive files (256 MiB by
	// default).
	MaxInput int64
	// Timeout bounds the whole extraction (30 s by default).
	Timeout time.Duration
	// MaxDictionarySize caps the RAR dictionary (DefaultMaxDictionarySize).
	MaxDictionarySize int64
	// NameKey, when set, maps an entry's name as the archive holds it to
	// the form the caller names entries by: an entry matches when
	// NameKey(its name) equals the name asked for. Callers that stored
	// names made storable (NUL and invalid UTF-8 replaced, cut) find the
	// entry by its stored name; nil compares the names as they are.
	NameKey func(name string) string
}

// matches reports whether an entry called name is the one asked for.
func (o ExtractOptions) matches(name, want string) bool {
	if o.NameKey != nil {
		return o.NameKey(name) == want
	}
	return name == want
}

func (o ExtractOptions) withDefaults() ExtractOptions {
	if o.MaxSize <= 0 {
		o.MaxSize = MaxPreviewSize
	}
	if o.MaxDecoded <= 0 {
		o.MaxDecoded = 64 << 20
	}
	if o.MaxInput <= 0 {
		o.MaxInput = 256 << 20
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.MaxDictionarySize <= 0 {
		o.MaxDictionarySize = DefaultMaxDictionarySize
	}
	return o
}

// Errors of Extract.
var (
	ErrEntryNotFound = errors.New("entry not found")
	ErrEncrypted     = errors.New("entry is encrypted")
	ErrTooLarge      = errors.New("entry is larger than the size limit")
	ErrSolidBudget   = errors.New("entry lies too deep in a solid block")
	ErrNotExtracted  = errors.New("type cannot be extracted")
)

// Extract returns the bytes of the entry at entryPath of the archive of type
// t made of the part files at paths, in memory, within the budgets of opts.
// Entry names are matched exactly and never touch the file system. Decoder
// panics become errors; a passed deadline returns context.DeadlineExceeded.
func Extract(ctx context.Context, t Type, paths []string, entryPath string, opts ExtractOptions) (data []byte, err error) {
	parts, err := OpenParts(paths...)
	if err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	defer parts.Close()
	return extractParts(ctx, t, parts, entryPath, opts)
}

func extractParts(ctx context.Context, t Type, parts *Parts, entryPath string, opts ExtractOptions) (data []byte, err error) {
	opts = opts.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			data, err = nil, fmt.Errorf("extract %q: decoder failure: %v", entryPath, r)
		}
		if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("extract %q: %w (%v)", entryPath, ctx.Err(), err)
		}
	}()
	switch t {
	case ZIP:
		data, err = extractZip(ctx, parts, entryPath, opts)
	case RAR:
		data, err = extractRar(ctx, parts, entryPath, opts)
	case SevenZ:
		data, err = extract7z(ctx, parts, entryPath, opts)
	default:
		err = ErrNotExtracted
	}
	if err != nil {
		return nil, fmt.Errorf("extract %q: %w", entryPath, err)
	}
	return data, nil
}

// readLimited reads all of r, failing once more than max bytes arrive.
func readLimited(r io.Reader, max int64) ([]byte, error) {
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, ErrTooLarge
	}
	return buf.Bytes(), nil
}

func extractZip(ctx context.Context, parts *Parts, name string, opts ExtractOptions) ([]byte, error) {
	ra := &ctxReaderAt{ctx: ctx, r: parts, limit: opts.MaxInput}
	end, ok := readZipEnd(ra, parts.Size())
	if ok && end.records > DefaultMaxEntries {
		return nil, fmt.Errorf("too many entries (%d)", end.records)
	}
	zr, err := zip.NewReader(ra, parts.Size())
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, err
	}
	for _, f := range zr.File {
		if !opts.matches(f.Name, name) {
			continue
		}
		if f.Flags&0x1 != 0 {
			return nil, ErrEncrypted
		}
		if f.UncompressedSize64 > uint64(opts.MaxSize) {
			return nil, ErrTooLarge
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return readLimited(rc, opts.MaxSize)
	}
	return nil, ErrEntryNotFound
}

func extract7z(ctx context.Context, parts *Parts, name string, opts ExtractOptions) ([]byte, error) {
	ra := &ctxReaderAt{ctx: ctx, r: parts, limit: opts.MaxInput}
	zr, err := sevenzip.NewReader(ra, parts.Size())
	if err != nil {
		if _, enc := sevenZipNote(err); enc {
			return nil, ErrEncrypted
		}
		return nil, err
	}
	// Bytes decoded before the entry: the earlier files of its block.
	before := map[int]int64{}
	for _, f := range zr.File {
		if !opts.matches(f.Name, name) {
			before[f.Stream] += int64(f.UncompressedSize)
			continue
		}
		if f.UncompressedSize > uint64(opts.MaxSize) {
			return nil, ErrTooLarge
		}
		if before[f.Stream] > opts.MaxDecoded {
			return nil, fmt.Errorf("%w: %d bytes to decode first", ErrSolidBudget, before[f.Stream])
		}
		rc, err := f.Open()
		if err != nil {
			if _, enc := sevenZipNote(err); enc {
				return nil, ErrEncrypted
			}
			return nil, err
		}
		defer rc.Close()
		data, err := readLimited(rc, opts.MaxSize)
		if err != nil {
			if _, enc := sevenZipNote(err); enc {
				return nil, ErrEncrypted
			}
		}
		return data, err
	}
	return nil, ErrEntryNotFound
}

func extractRar(ctx context.Context, parts *Parts, name string, opts ExtractOptions) ([]byte, error) {
	v := rarFS(ctx, parts)
	ropts := rarOptions(v, ListOptions{MaxDictionarySize: opts.MaxDictionarySize})
	files, err := rardecode.List("v1.rar", ropts...)
	if err != nil {
		if _, enc := rarNote(err); enc {
			return nil, ErrEncrypted
		}
		return nil, err
	}
	var before int64
	idx := -1
	for i, f := range files {
		if opts.matches(f.Name, name) && !f.IsDir {
			idx = i
			break
		}
		before += f.UnPackedSize
	}
	if idx < 0 {
		return nil, ErrEntryNotFound
	}
	f := files[idx]
	if f.Encrypted {
		return nil, ErrEncrypted
	}
	if f.UnPackedSize > opts.MaxSize {
		return nil, ErrTooLarge
	}
	wrap := func(err error) error {
		if _, enc := rarNote(err); enc {
			return ErrEncrypted
		}
		return err
	}
	if !f.Solid {
		rc, err := f.Open()
		if err != nil {
			return nil, wrap(err)
		}
		defer rc.Close()
		data, err := readLimited(rc, opts.MaxSize)
		return data, wrap(err)
	}
	// A solid entry: every earlier file is decoded on the way.
	if before > opts.MaxDecoded {
		return nil, fmt.Errorf("%w: %d bytes to decode first", ErrSolidBudget, before)
	}
	rc, err := rardecode.OpenReader("v1.rar", ropts...)
	if err != nil {
		return nil, wrap(err)
	}
	defer rc.Close()
	for i := 0; ; i++ {
		h, err := rc.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, ErrEntryNotFound
			}
			return nil, wrap(err)
		}
		if i == idx && opts.matches(h.Name, name) {
			data, err := readLimited(&rc.Reader, opts.MaxSize)
			return data, wrap(err)
		}
	}
}

// Photo is a photo message that may serve as an archive's preview.
type Photo struct {
	ID      int64
	AlbumID int64 // 0 when the photo is not in an album
	Caption string
	Date    time.Time
}

// DefaultPhotoWindow is how far apart in time a photo and an archive may be
// posted for a caption match.
const DefaultPhotoWindow = 6 * time.Hour

// MatchPhoto picks the posted photo to use as the preview of an archive
// posted at date, with album id albumID (0 for none) and file name name. A
// photo of the same album wins (the closest in time); else a photo whose
// normalised caption contains the archive's normalised base name as whole
// words, or the other way round, posted within window of the archive
// (DefaultPhotoWindow when window <= 0), the closest in time; ties go to the
// lower id. ok is false when no photo matches.
func MatchPhoto(albumID int64, name string, date time.Time, window time.Duration, photos []Photo) (Photo, bool) {
	if window <= 0 {
		window = DefaultPhotoWindow
	}
	dist := func(p Photo) time.Duration {
		d := p.Date.Sub(date)
		if d < 0 {
			d = -d
		}
		return d
	}
	better := func(a, b Photo) bool { // a closer than b
		return cmp.Or(cmp.Compare(dist(a), dist(b)), cmp.Compare(a.ID, b.ID)) < 0
	}
	var album []Photo
	if albumID != 0 {
		for _, p := range photos {
			if p.AlbumID == albumID {
				album = append(album, p)
			}
		}
	}
	if len(album) > 0 {
		best := album[0]
		for _, p := range album[1:] {
			if better(p, best) {
				best = p
			}
		}
		return best, true
	}
	base := NormalizeCaption(stripPartAndExt(name))
	if len(base) < 3 {
		return Photo{}, false
	}
	var best Photo
	found := false
	for _, p := range photos {
		if dist(p) > window {
			continue
		}
		c := NormalizeCaption(p.Caption)
		if len(c) < 3 || !containsWords(c, base) && !containsWords(base, c) {
			continue
		}
		if !found || better(p, best) {
			best, found = p, true
		}
	}
	return best, found
}

var reNonWord = regexp.MustCompile(`[^\p{L}\p{N}]+`)

// NormalizeCaption lower-cases s, removes a trailing archive, document or
// image extension and turns every run of non-letters and non-digits into one
// space.
func NormalizeCaption(s string) string {
	s = strings.TrimSpace(s)
	ext := strings.ToLower(path.Ext(s))
	if _, ok := archiveExts[ext]; ok || documentExts[ext] || imageExts[ext] {
		s = s[:len(s)-len(ext)]
	}
	return strings.TrimSpace(reNonWord.ReplaceAllString(strings.ToLower(s), " "))
}

// containsWords reports whether the words of sub occur in s consecutively.
func containsWords(s, sub string) bool {
	return strings.Contains(" "+s+" ", " "+sub+" ")
}
