package dav

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/download"
	"github.com/hoard/hoard/store"
	"golang.org/x/net/webdav"
)

// The top folders of the view.
const (
	dirCreators = "creators"
	dirGroups   = "groups"
	dirTags     = "tags"
	dirLatest   = "latest"
)

// topDirs are the root's folders, in the order listed.
var topDirs = []string{dirCreators, dirGroups, dirTags, dirLatest}

// fileSystem is the catalog as a read-only webdav.FileSystem. Every
// method that would write fails with os.ErrPermission.
type fileSystem struct {
	db    *store.DB
	files *download.Service
}

var _ webdav.FileSystem = (*fileSystem)(nil)

// Mkdir refuses: the view is read-only.
func (*fileSystem) Mkdir(_ context.Context, name string, _ os.FileMode) error {
	return &os.PathError{Op: "mkdir", Path: name, Err: os.ErrPermission}
}

// RemoveAll refuses: the view is read-only.
func (*fileSystem) RemoveAll(_ context.Context, name string) error {
	return &os.PathError{Op: "remove", Path: name, Err: os.ErrPermission}
}

// Rename refuses: the view is read-only.
func (*fileSystem) Rename(_ context.Context, oldName, _ string) error {
	return &os.PathError{Op: "rename", Path: oldName, Err: os.ErrPermission}
}

// writeFlags are the OpenFile flags that would change a file.
const writeFlags = os.O_WRONLY | os.O_RDWR | os.O_CREATE | os.O_TRUNC | os.O_APPEND | os.O_EXCL

// OpenFile opens name for reading; any write flag is os.ErrPermission, a
// name that does not resolve os.ErrNotExist. Opening reads the database
// only: a file's bytes are asked of the platform on its first Read.
func (f *fileSystem) OpenFile(ctx context.Context, name string, flag int, _ os.FileMode) (webdav.File, error) {
	if flag&writeFlags != 0 {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrPermission}
	}
	e, err := f.resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	if !e.dir {
		return &packageFile{ctx: ctx, e: e, files: f.files}, nil
	}
	clean := cleanPath(name)
	return &dirFile{e: e, list: func() ([]*entry, error) { return f.list(ctx, clean, e) }}, nil
}

// Stat returns what name is, from the database alone.
func (f *fileSystem) Stat(ctx context.Context, name string) (os.FileInfo, error) {
	return f.resolve(ctx, name)
}

// cleanPath returns name as a clean absolute path.
func cleanPath(name string) string {
	return path.Clean("/" + name)
}

// segments splits a clean absolute path into its names.
func segments(clean string) []string {
	if clean == "/" {
		return nil
	}
	return strings.Split(clean[1:], "/")
}

// notExist is the error of a name that does not resolve.
func notExist(name string) error {
	return &os.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// resolve returns the entry at name: the root, a top folder, a folder of
// packages or a file.
func (f *fileSystem) resolve(ctx context.Context, name string) (*entry, error) {
	clean := cleanPath(name)
	segs := segments(clean)
	switch {
	case len(segs) == 0:
		return &entry{name: "/", dir: true, modTime: folderTime}, nil
	case !slices.Contains(topDirs, segs[0]):
		return nil, notExist(name)
	case len(segs) == 1:
		return topEntry(segs[0]), nil
	case segs[0] == dirLatest && len(segs) == 2:
		return f.child(ctx, name, "/"+dirLatest, topEntry(dirLatest), segs[1])
	case segs[0] == dirLatest || len(segs) > 3:
		return nil, notExist(name)
	}
	folder, err := f.findFolder(ctx, name, segs[0], segs[1])
	if err != nil || len(segs) == 2 {
		return folder, err
	}
	return f.child(ctx, name, path.Dir(clean), folder, segs[2])
}

// topEntry returns a top folder; latest/ lists packages itself.
func topEntry(name string) *entry {
	e := &entry{name: name, dir: true, modTime: folderTime}
	if name == dirLatest {
		e.folder = store.DavPackageFolder{Latest: true}
	}
	return e
}

// child returns the entry named seg in the folder parent at dir, found in
// the folder's listing.
func (f *fileSystem) child(ctx context.Context, name, dir string, parent *entry, seg string) (*entry, error) {
	all, err := f.list(ctx, dir, parent)
	if err != nil {
		return nil, err
	}
	for _, e := range all {
		if e.name == seg {
			return e, nil
		}
	}
	return nil, notExist(name)
}

// findFolder returns the folder of packages seg in the top folder top: a
// segment that is a row's name as it is resolves with one indexed lookup
// (unless this request listed the top folder already); any other, made
// safe or unique by this view, through the top folder's listing.
func (f *fileSystem) findFolder(ctx context.Context, name, top, seg string) (*entry, error) {
	dir := "/" + top
	if _, listed := memoFrom(ctx).get(dir); listed || !plain(seg) {
		return f.child(ctx, name, dir, topEntry(top), seg)
	}
	e := &entry{name: seg, dir: true, modTime: folderTime}
	var found bool
	var err error
	switch top {
	case dirCreators:
		var creator string
		creator, found, err = f.db.FindDavCreator(ctx, seg)
		found = found && creator == seg
		e.folder.Creator = creator
	case dirTags:
		found, err = f.db.HasDavTag(ctx, seg)
		e.folder.Tag = seg
	case dirGroups:
		var g store.DavGroup
		g, found, err = f.db.FindDavGroupByName(ctx, seg)
		e.folder.GroupID = g.ID
	}
	if err != nil {
		return nil, fmt.Errorf("dav: resolve %q: %w", name, err)
	}
	if !found {
		return nil, notExist(name)
	}
	return e, nil
}

// list returns the entries of the folder e at the clean path dir, listed
// once per request (webdav stats and opens every entry of a listing).
func (f *fileSystem) list(ctx context.Context, dir string, e *entry) ([]*entry, error) {
	m := memoFrom(ctx)
	if all, ok := m.get(dir); ok {
		return all, nil
	}
	var all []*entry
	var err error
	switch {
	case dir == "/":
		for _, name := range topDirs {
			all = append(all, topEntry(name))
		}
	case e.folder != (store.DavPackageFolder{}):
		all, err = f.listPackages(ctx, e.folder)
	default:
		all, err = f.listFolders(ctx, e.name)
	}
	if err != nil {
		return nil, fmt.Errorf("dav: list %q: %w", dir, err)
	}
	m.put(dir, all)
	return all, nil
}

// listFolders lists a top folder's folders of packages, in the store's
// order, named uniquely.
func (f *fileSystem) listFolders(ctx context.Context, top string) ([]*entry, error) {
	var folders []store.DavPackageFolder
	var names []string
	switch top {
	case dirCreators:
		creators, err := f.db.ListDavCreators(ctx)
		if err != nil {
			return nil, err
		}
		for _, c := range creators {
			folders, names = append(folders, store.DavPackageFolder{Creator: c}), append(names, c)
		}
	case dirTags:
		tags, err := f.db.ListDavTags(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range tags {
			folders, names = append(folders, store.DavPackageFolder{Tag: t}), append(names, t)
		}
	case dirGroups:
		groups, err := f.db.ListDavGroups(ctx)
		if err != nil {
			return nil, err
		}
		for _, g := range groups {
			folders, names = append(folders, store.DavPackageFolder{GroupID: g.ID}), append(names, g.Name)
		}
	}
	return named(names, false, func(i int, name string) *entry {
		return &entry{name: name, dir: true, modTime: folderTime, folder: folders[i]}
	}), nil
}

// listPackages lists the files of a folder's packages (as
// download.Service.Files serves them), named uniquely: the oldest package
// keeps a shared name.
func (f *fileSystem) listPackages(ctx context.Context, folder store.DavPackageFolder) ([]*entry, error) {
	pkgs, err := f.db.ListDavPackages(ctx, folder)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(pkgs, func(a, b hoard.Package) int { return cmp.Compare(a.ID, b.ID) })
	parts, err := f.db.PackagePartsOf(ctx, pkgs)
	if err != nil {
		return nil, err
	}
	var files []*entry
	var names []string
	for i := range pkgs {
		pkg := &pkgs[i]
		for _, file := range f.files.Files(pkg, parts[pkg.ID]) {
			files = append(files, &entry{size: file.Size, modTime: pkg.CreatedAt, pkg: pkg, part: file.Part})
			names = append(names, file.Name)
		}
	}
	return named(names, true, func(i int, name string) *entry {
		files[i].name = name
		return files[i]
	}), nil
}

// named makes names safe and unique and returns build(i, name) for each.
func named(names []string, files bool, build func(i int, name string) *entry) []*entry {
	segs := make([]string, len(names))
	for i, n := range names {
		segs[i] = Segment(n)
	}
	out := make([]*entry, len(names))
	for i, name := range uniqueNames(segs, files) {
		out[i] = build(i, name)
	}
	return out
}

// memo keeps the listings one request made: webdav stats and opens every
// entry of a listing, and each would list its folder again.
type memo struct {
	mu    sync.Mutex
	lists map[string][]*entry
}

type memoKey struct{}

// withMemo returns ctx with a memo of listings for one request.
func withMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, memoKey{}, &memo{lists: map[string][]*entry{}})
}

// memoFrom returns ctx's memo; nil (which keeps nothing) when it has none.
func memoFrom(ctx context.Context) *memo {
	m, _ := ctx.Value(memoKey{}).(*memo)
	return m
}

func (m *memo) get(dir string) ([]*entry, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	all, ok := m.lists[dir]
	return all, ok
}

func (m *memo) put(dir string, all []*entry) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lists[dir] = all
}
