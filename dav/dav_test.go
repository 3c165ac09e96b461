package dav

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/download"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// platformChunk is the platform's download chunk, where a Limit stops.
const platformChunk = 1 << 20

// fakeReader is a messenger.FileReader serving documents from memory and
// counting the requests it answers.
type fakeReader struct {
	mu        sync.Mutex
	docs      map[int]fakeDoc // by message id
	posts     atomic.Int64
	downloads atomic.Int64
}

type fakeDoc struct {
	name string
	data []byte
}

func (f *fakeReader) add(msgID int, name string, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.docs == nil {
		f.docs = map[int]fakeDoc{}
	}
	f.docs[msgID] = fakeDoc{name: name, data: data}
}

func (f *fakeReader) doc(msgID int) (fakeDoc, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.docs[msgID]
	return d, ok
}

// Posts returns the posts asked for that hold a document, in order.
func (f *fakeReader) Posts(_ context.Context, _ int64, ids []int) ([]messenger.Message, error) {
	f.posts.Add(1)
	var out []messenger.Message
	for _, id := range ids {
		if d, ok := f.doc(id); ok {
			out = append(out, messenger.Message{ID: id, Document: &messenger.Document{ID: int64(id), FileName: d.name, Size: int64(len(d.data))}})
		}
	}
	return out, nil
}

// Download writes the document from req.Offset on, and with a Limit only
// up to the end of the platform chunk that holds byte Limit, in pieces.
func (f *fakeReader) Download(_ context.Context, req messenger.DownloadRequest, w io.WriterAt) error {
	f.downloads.Add(1)
	d, ok := f.doc(req.MessageID)
	if !ok || req.Document.ID != int64(req.MessageID) {
		return fmt.Errorf("download: no document in post %d", req.MessageID)
	}
	end := int64(len(d.data))
	if req.Limit > 0 {
		end = min(end, (req.Limit/platformChunk+1)*platformChunk)
	}
	for off := req.Offset; off < end; off += 128 << 10 {
		piece := d.data[off:min(off+128<<10, end)]
		if _, err := w.WriteAt(piece, off); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeReader) calls() int64 { return f.posts.Load() + f.downloads.Load() }

// fixture is a catalog with hostile names and the bytes of its files.
type fixture struct {
	db     *store.DB
	reader *fakeReader
	srv    *httptest.Server // the handler mounted at /dav/
	bytes  map[string][]byte
	hashes map[string]string
}

// data returns n deterministic bytes.
func data(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// pkgSpec is a package of the fixture: its posts (name and size each)
// and, when parts, the parts recorded as a download would have learned.
type pkgSpec struct {
	key      string
	name     string
	creator  string
	tags     []string
	group    string
	posts    []fakeDoc
	parts    bool
	unpublic bool
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{db: storetest.NewDB(t), reader: &fakeReader{}, bytes: map[string][]byte{}, hashes: map[string]string{}}
	dest := &hoard.Channel{PlatformID: 42, Title: "Destination", Kind: hoard.ChannelDestination}
	if err := f.db.UpsertChannel(ctx, dest); err != nil {
		t.Fatal(err)
	}
	groups := map[string]int64{}
	for _, name := range []string{"Dragons", "Dup", "Dup (2)"} {
		g := &hoard.PackageGroup{Name: strings.TrimSuffix(name, " (2)"), GroupingSource: hoard.GroupManual}
		if err := f.db.CreateGroup(ctx, g); err != nil {
			t.Fatal(err)
		}
		groups[name] = g.ID
	}
	specs := []pkgSpec{
		{key: "p1", name: "dragon.zip", creator: "Alice", tags: []string{"minis"}, group: "Dragons",
			posts: []fakeDoc{{name: "dragon.zip", data: data(1, 2*platformChunk+platformChunk/2)}}},
		{key: "p2", name: "dragon.zip", creator: "alice", tags: []string{"minis"}, posts: []fakeDoc{{name: "dragon.zip", data: data(2, 1000)}}},
		{key: "p3", name: "a/b\x01c.stl", creator: "a/b", tags: []string{"a/b", "tab\tname"},
			posts: []fakeDoc{{name: "a/b\x01c.stl", data: data(3, 333)}}},
		{key: "p4", name: "set.rar", creator: "a∕b", group: "Dup", parts: true,
			posts: []fakeDoc{{name: "set.part1.rar", data: data(41, 4000)}, {name: "set.part2.rar", data: data(42, 1500)}}},
		{key: "p5", name: "..", creator: "..", tags: []string{"../x"}, group: "Dup (2)", posts: []fakeDoc{{name: "..", data: data(5, 10)}}},
		{key: "p6", name: "big.zip", parts: true,
			posts: []fakeDoc{{name: "big.zip.001", data: data(61, platformChunk)}, {name: "big.zip.002", data: data(62, platformChunk/2)}}},
		{key: "p7", name: "ghost.zip", creator: "Ghost", tags: []string{"ghost"}, unpublic: true, posts: []fakeDoc{{name: "ghost.zip", data: data(7, 5)}}},
	}
	for i, s := range specs {
		f.addPackage(t, dest.ID, 100*(i+1), s, groups[s.group])
	}
	mux := http.NewServeMux()
	files := &download.Service{DB: f.db, Reader: func(context.Context) (messenger.FileReader, error) { return f.reader, nil }}
	mux.Handle("/dav/", New(f.db, files, "/dav", nil))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// addPackage stores a package whose posts are msgID, msgID+1, … and keeps
// its bytes under its key (and key/part name for each volume).
func (f *fixture) addPackage(t *testing.T, destID int64, msgID int, s pkgSpec, groupID int64) {
	t.Helper()
	ctx := context.Background()
	p := &hoard.Package{FileName: s.name, ArchiveType: hoard.ArchiveZIP, ContentHash: fmt.Sprintf("%064x", msgID),
		PartCount: len(s.posts), Creator: s.creator, Tags: s.tags, PackageGroupID: groupID}
	var whole []byte
	var parts []hoard.PackagePart
	for i, d := range s.posts {
		id := msgID + i
		f.reader.add(id, d.name, d.data)
		p.DestMessageIDs = append(p.DestMessageIDs, int64(id))
		parts = append(parts, hoard.PackagePart{PartNo: i + 1, DestMessageID: int64(id), Name: d.name, Size: int64(len(d.data))})
		f.bytes[s.key+"/"+d.name] = d.data
		whole = append(whole, d.data...)
	}
	p.FileSize = int64(len(whole))
	f.bytes[s.key], f.hashes[s.key] = whole, p.ContentHash
	if !s.unpublic {
		p.DestChannelID, p.DestMessageID = destID, int64(msgID)
	}
	if err := f.db.CreatePackage(ctx, p); err != nil {
		t.Fatal(err)
	}
	if s.parts {
		if err := f.db.RecordPackageParts(ctx, p.ID, parts); err != nil {
			t.Fatal(err)
		}
	}
}

// item is one entry of a PROPFIND answer.
type item struct {
	Name string
	Size int64
	Dir  bool
}

type multistatus struct {
	Responses []struct {
		Href     string `xml:"href"`
		Propstat []struct {
			Prop struct {
				Length       string `xml:"getcontentlength"`
				ETag         string `xml:"getetag"`
				ResourceType struct {
					Collection *struct{} `xml:"collection"`
				} `xml:"resourcetype"`
			} `xml:"prop"`
		} `xml:"propstat"`
	} `xml:"response"`
}

// do sends a request to the handler and returns its status and body.
func (f *fixture) do(t *testing.T, method, p string, header map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+(&url.URL{Path: p}).EscapedPath(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

// propfind lists a folder (depth 1) and returns its entries, sorted by
// name, the folder itself left out.
func (f *fixture) propfind(t *testing.T, dir string) ([]item, error) {
	t.Helper()
	status, _, body := f.do(t, "PROPFIND", dir, map[string]string{"Depth": "1"})
	if status != http.StatusMultiStatus {
		return nil, fmt.Errorf("PROPFIND %s: %d %s", dir, status, body)
	}
	var ms multistatus
	if err := xml.Unmarshal(body, &ms); err != nil {
		return nil, err
	}
	items := []item{}
	for _, r := range ms.Responses {
		href, err := url.PathUnescape(r.Href)
		if err != nil {
			return nil, err
		}
		if strings.TrimSuffix(href, "/") == strings.TrimSuffix(dir, "/") {
			continue
		}
		it := item{Name: href[strings.LastIndex(strings.TrimSuffix(href, "/"), "/")+1:]}
		it.Name = strings.TrimSuffix(it.Name, "/")
		for _, ps := range r.Propstat {
			if ps.Prop.ResourceType.Collection != nil {
				it.Dir = true
			}
			if ps.Prop.Length != "" {
				fmt.Sscan(ps.Prop.Length, &it.Size)
			}
		}
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b item) int { return strings.Compare(a.Name, b.Name) })
	return items, nil
}

func dirs(names ...string) []item {
	out := make([]item, len(names))
	for i, n := range names {
		out[i] = item{Name: n, Dir: true}
	}
	return out
}

// tree is the fixture's layout: every folder's entries.
var tree = []struct {
	dir  string
	want []item
}{
	{"/dav/", dirs("creators", "groups", "latest", "tags")},
	{"/dav/creators/", dirs("Alice", "a∕b", "a∕b (2)", "․․")},
	{"/dav/creators/Alice/", []item{{Name: "dragon (2).zip", Size: 1000}, {Name: "dragon.zip", Size: 2*platformChunk + platformChunk/2}}},
	{"/dav/creators/a∕b/", []item{{Name: "a∕b�c.stl", Size: 333}}},
	{"/dav/creators/a∕b (2)/", []item{{Name: "set.part1.rar", Size: 4000}, {Name: "set.part2.rar", Size: 1500}}},
	{"/dav/creators/․․/", []item{{Name: "․․", Size: 10}}},
	{"/dav/groups/", dirs("Dragons", "Dup", "Dup (2)")},
	{"/dav/groups/Dragons/", []item{{Name: "dragon.zip", Size: 2*platformChunk + platformChunk/2}}},
	{"/dav/groups/Dup/", []item{{Name: "set.part1.rar", Size: 4000}, {Name: "set.part2.rar", Size: 1500}}},
	{"/dav/groups/Dup (2)/", []item{{Name: "․․", Size: 10}}},
	{"/dav/tags/", dirs("..∕x", "a∕b", "minis", "tab�name")},
	{"/dav/tags/..∕x/", []item{{Name: "․․", Size: 10}}},
	{"/dav/tags/a∕b/", []item{{Name: "a∕b�c.stl", Size: 333}}},
	{"/dav/tags/minis/", []item{{Name: "dragon (2).zip", Size: 1000}, {Name: "dragon.zip", Size: 2*platformChunk + platformChunk/2}}},
	{"/dav/tags/tab�name/", []item{{Name: "a∕b�c.stl", Size: 333}}},
	{"/dav/latest/", []item{{Name: "a∕b�c.stl", Size: 333}, {Name: "big.zip", Size: platformChunk + platformChunk/2},
		{Name: "dragon (2).zip", Size: 1000}, {Name: "dragon.zip", Size: 2*platformChunk + platformChunk/2},
		{Name: "set.part1.rar", Size: 4000}, {Name: "set.part2.rar", Size: 1500}, {Name: "․․", Size: 10}}},
}

// fileKeys maps the name of every file in the tree to its bytes in
// fixture.bytes.
var fileKeys = map[string]string{
	"dragon.zip": "p1", "dragon (2).zip": "p2", "a∕b�c.stl": "p3", "set.part1.rar": "p4/set.part1.rar",
	"set.part2.rar": "p4/set.part2.rar", "․․": "p5", "big.zip": "p6",
}

func TestPropfind(t *testing.T) {
	f := newFixture(t)
	tests := append(tree[:len(tree):len(tree)], struct {
		dir  string
		want []item
	}{"/dav/latest/big.zip", []item{}}) // depth 1 of a file: the file itself
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			got, err := f.propfind(t, tt.dir)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("PROPFIND %s =\n%v\nwant\n%v", tt.dir, got, tt.want)
			}
		})
	}
	if n := f.reader.calls(); n != 0 {
		t.Errorf("listings made %d platform requests, want none", n)
	}
}

func TestNotFound(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{
		"/dav/nope", "/dav/creators/Nobody/", "/dav/creators/alice/", "/dav/creators/Ghost/", "/dav/tags/ghost/",
		"/dav/creators/Alice/ghost.zip", "/dav/creators/Alice/dragon (3).zip", "/dav/latest/a/b", "/dav/creators/a/b/",
		"/dav/creators/../x", "/dav/groups/Dup (3)/", "/dav/latest/x/y/z", "/dav/creators/Alice/dragon.zip/x",
	} {
		t.Run(p, func(t *testing.T) {
			for _, method := range []string{"PROPFIND", http.MethodGet} {
				status, _, _ := f.do(t, method, p, map[string]string{"Depth": "0"})
				if status != http.StatusNotFound {
					t.Errorf("%s %s = %d, want 404", method, p, status)
				}
			}
		})
	}
}

func TestGet(t *testing.T) {
	f := newFixture(t)
	big := 2*platformChunk + platformChunk/2
	tests := []struct {
		name   string
		path   string
		rng    string
		status int
		want   []byte
		etag   string
	}{
		{"whole", "/dav/creators/Alice/dragon.zip", "", 200, f.bytes["p1"], f.hashes["p1"]},
		{"duplicate name", "/dav/tags/minis/dragon (2).zip", "", 200, f.bytes["p2"], f.hashes["p2"]},
		{"hostile name", "/dav/creators/a∕b/a∕b�c.stl", "", 200, f.bytes["p3"], f.hashes["p3"]},
		{"dots", "/dav/groups/Dup (2)/․․", "", 200, f.bytes["p5"], f.hashes["p5"]},
		{"joined parts", "/dav/latest/big.zip", "", 200, f.bytes["p6"], f.hashes["p6"]},
		{"volume", "/dav/groups/Dup/set.part2.rar", "", 200, f.bytes["p4/set.part2.rar"], f.hashes["p4"] + "-part2"},
		{"range across chunks", "/dav/creators/Alice/dragon.zip", "bytes=1048000-1049999", 206, f.bytes["p1"][1048000:1050000], f.hashes["p1"]},
		{"range at the end", "/dav/creators/Alice/dragon.zip", "bytes=-100", 206, f.bytes["p1"][big-100:], f.hashes["p1"]},
		{"range across parts", "/dav/latest/big.zip", "bytes=1048570-1048581", 206, f.bytes["p6"][1048570:1048582], f.hashes["p6"]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tt.rng != "" {
				hdr["Range"] = tt.rng
			}
			status, h, body := f.do(t, http.MethodGet, tt.path, hdr)
			if status != tt.status || !bytes.Equal(body, tt.want) || h.Get("ETag") != `"`+tt.etag+`"` {
				t.Errorf("GET %s (%s) = %d, %d bytes (equal: %v), ETag %s; want %d, %d bytes, ETag %q", tt.path, tt.rng,
					status, len(body), bytes.Equal(body, tt.want), h.Get("ETag"), tt.status, len(tt.want), tt.etag)
			}
		})
	}
}

func TestReadOnly(t *testing.T) {
	f := newFixture(t)
	for _, method := range []string{"PUT", "DELETE", "MKCOL", "MOVE", "COPY", "LOCK", "UNLOCK", "PROPPATCH", "POST"} {
		for _, p := range []string{"/dav/creators/Alice/dragon.zip", "/dav/creators/Alice/new.zip", "/dav/new/"} {
			status, h, _ := f.do(t, method, p, map[string]string{"Destination": f.srv.URL + "/dav/latest/x.zip", "Depth": "0"})
			if status != http.StatusMethodNotAllowed || h.Get("Allow") != allowed {
				t.Errorf("%s %s = %d (Allow %q), want 405", method, p, status, h.Get("Allow"))
			}
		}
	}
	for _, depth := range []string{"", "infinity"} {
		if status, _, body := f.do(t, "PROPFIND", "/dav/", map[string]string{"Depth": depth}); status != http.StatusForbidden ||
			!strings.Contains(string(body), "propfind-finite-depth") {
			t.Errorf("PROPFIND depth %q = %d %s, want 403", depth, status, body)
		}
	}
	if status, h, _ := f.do(t, http.MethodOptions, "/dav/", nil); status != 200 || h.Get("Allow") != allowed || h.Get("DAV") != "1" {
		t.Errorf("OPTIONS = %d, Allow %q, DAV %q", status, h.Get("Allow"), h.Get("DAV"))
	}
	if got, err := f.propfind(t, "/dav/creators/Alice/"); err != nil || len(got) != 2 {
		t.Errorf("after the refused writes, Alice holds %v (%v)", got, err)
	}

	// The file system refuses writes too, whoever calls it.
	ctx := context.Background()
	fsys := &fileSystem{db: f.db}
	errs := map[string]error{
		"mkdir":  fsys.Mkdir(ctx, "/creators/x", 0o755),
		"remove": fsys.RemoveAll(ctx, "/creators/Alice"),
		"rename": fsys.Rename(ctx, "/latest/big.zip", "/latest/b.zip"),
	}
	for _, flag := range []int{os.O_WRONLY, os.O_RDWR, os.O_CREATE, os.O_TRUNC | os.O_RDONLY, os.O_APPEND} {
		_, errs[fmt.Sprintf("open %#x", flag)] = fsys.OpenFile(ctx, "/latest/big.zip", flag, 0o644)
	}
	for op, err := range errs {
		if !errors.Is(err, os.ErrPermission) {
			t.Errorf("%s: %v, want os.ErrPermission", op, err)
		}
	}
}
