package dav

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path"
	"strconv"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/download"
	"github.com/hoard/hoard/store"
	"golang.org/x/net/webdav"
)

// folderTime is the modification time of every folder: folders are views
// whose time nothing in the catalog records, and a constant keeps their
// listings stable.
var folderTime = time.Unix(0, 0).UTC()

// entry is one name of the view, a folder or a file of a package, known
// from the database alone. It is the os.FileInfo webdav lists, with an
// ETag and a content type so that a listing never reads bytes.
type entry struct {
	name string
	dir  bool
	// folder is what a folder of packages lists (zero for the root and
	// the top folders).
	folder  store.DavPackageFolder
	size    int64
	modTime time.Time
	pkg     *hoard.Package // a file's package
	part    int            // a file's download.File.Part
}

// Name implements os.FileInfo: the entry's safe, unique name.
func (e *entry) Name() string { return e.name }

// Size implements os.FileInfo: a file's size as the catalog knows it.
func (e *entry) Size() int64 { return e.size }

// ModTime implements os.FileInfo: when a file's package was indexed.
func (e *entry) ModTime() time.Time { return e.modTime }

// IsDir implements os.FileInfo.
func (e *entry) IsDir() bool { return e.dir }

// Sys implements os.FileInfo: nil.
func (e *entry) Sys() any { return nil }

// Mode implements os.FileInfo: read-only.
func (e *entry) Mode() fs.FileMode {
	if e.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

// ETag implements webdav.ETager: a file's tag is the one download.Service
// serves it with — its content hash, or the posts it is read from, and
// its part — so it is strong and changes only when the bytes could.
// Folders have none (webdav.ErrNotImplemented; webdav asks files only).
func (e *entry) ETag(context.Context) (string, error) {
	if e.pkg == nil {
		return "", webdav.ErrNotImplemented
	}
	tag := e.pkg.ContentHash
	if tag == "" {
		tag = "posts"
		for _, id := range e.pkg.DestMessageIDs {
			tag += "-" + strconv.FormatInt(id, 10)
		}
	}
	if e.part > 0 {
		tag += "-part" + strconv.Itoa(e.part)
	}
	return `"` + tag + `"`, nil
}

// ContentType implements webdav.ContentTyper from the name alone, so
// that a listing never opens a file to sniff it.
func (e *entry) ContentType(context.Context) (string, error) {
	return contentType(e.name), nil
}

// contentType returns the media type of a file name by its extension,
// application/octet-stream when it has none known.
func contentType(name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// dirFile is an open folder: its entries are listed on the first Readdir
// only, because webdav opens every entry of a listing to read its
// properties.
type dirFile struct {
	e    *entry
	list func() ([]*entry, error)
	read []*entry // what Readdir has not returned yet; nil until listed
	done bool
}

func (d *dirFile) Close() error { return nil }

func (d *dirFile) Read([]byte) (int, error) {
	return 0, &os.PathError{Op: "read", Path: d.e.name, Err: errors.New("is a directory")}
}

func (d *dirFile) Seek(int64, int) (int64, error) {
	return 0, &os.PathError{Op: "seek", Path: d.e.name, Err: errors.New("is a directory")}
}

func (d *dirFile) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: d.e.name, Err: os.ErrPermission}
}

func (d *dirFile) Stat() (fs.FileInfo, error) { return d.e, nil }

// Readdir returns the folder's entries as os.File.Readdir does: all of
// them (count <= 0), or the next count with io.EOF at the end.
func (d *dirFile) Readdir(count int) ([]fs.FileInfo, error) {
	if !d.done {
		all, err := d.list()
		if err != nil {
			return nil, err
		}
		d.read, d.done = all, true
	}
	n := len(d.read)
	if count > 0 {
		if n == 0 {
			return nil, io.EOF
		}
		n = min(n, count)
	}
	out := make([]fs.FileInfo, n)
	for i, e := range d.read[:n] {
		out[i] = e
	}
	d.read = d.read[n:]
	return out, nil
}

// packageFile is an open file of a package. Nothing is asked of the
// platform until the first Read: webdav opens files to list their
// properties, and http.ServeContent seeks to learn the size.
type packageFile struct {
	ctx   context.Context
	e     *entry
	files *download.Service
	pos   int64
	rs    io.ReadSeekCloser // open at some position, or nil
}

func (f *packageFile) Stat() (fs.FileInfo, error) { return f.e, nil }

func (f *packageFile) Readdir(int) ([]fs.FileInfo, error) {
	return nil, &os.PathError{Op: "readdir", Path: f.e.name, Err: errors.New("not a directory")}
}

func (f *packageFile) Write([]byte) (int, error) {
	return 0, &os.PathError{Op: "write", Path: f.e.name, Err: os.ErrPermission}
}

// Seek moves the position within the file's size as the database knows it.
func (f *packageFile) Seek(offset int64, whence int) (int64, error) {
	abs := offset
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		abs += f.pos
	case io.SeekEnd:
		abs += f.e.size
	default:
		return f.pos, &os.PathError{Op: "seek", Path: f.e.name, Err: fmt.Errorf("whence %d", whence)}
	}
	if abs < 0 {
		return f.pos, &os.PathError{Op: "seek", Path: f.e.name, Err: fmt.Errorf("negative position %d", abs)}
	}
	f.pos = abs
	return abs, nil
}

// Read opens the package's content on first use (download.Service.Open)
// and reads from the position.
func (f *packageFile) Read(p []byte) (int, error) {
	if f.rs == nil {
		c, err := f.files.Open(f.ctx, f.e.pkg, f.e.part)
		if err != nil {
			return 0, fmt.Errorf("open %q of package %d: %w", f.e.name, f.e.pkg.ID, err)
		}
		f.rs = c.ReadSeeker(f.ctx)
	}
	if _, err := f.rs.Seek(f.pos, io.SeekStart); err != nil {
		return 0, fmt.Errorf("read %q: %w", f.e.name, err)
	}
	n, err := f.rs.Read(p)
	f.pos += int64(n)
	return n, err
}

func (f *packageFile) Close() error {
	if f.rs == nil {
		return nil
	}
	err := f.rs.Close()
	f.rs = nil
	return err
}
