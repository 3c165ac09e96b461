package web

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/download"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/messenger/messengertest"
)

// downloadEnv is the web application with downloads through the real bot
// from the emulator's destination channel.
type downloadEnv struct {
	*testEnv
	dest    *messengertest.Destination
	destRow *hoard.Channel
}

func newDownloadEnv(t *testing.T) *downloadEnv {
	t.Helper()
	emu := messengertest.Start(t, "")
	dest := emu.DestinationWithBot(t, emu.Config("bot"))
	cache, err := download.OpenCache(filepath.Join(t.TempDir(), "cache"), 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(d *Deps) {
		d.Downloads = &download.Service{DB: d.DB, Cache: cache,
			Reader: func(context.Context) (messenger.FileReader, error) { return dest.Bot, nil }}
	})
	row := &hoard.Channel{PlatformID: dest.Channel.ID, Title: dest.Channel.Title, Kind: hoard.ChannelDestination, IsActive: true}
	if err := e.db.UpsertChannel(context.Background(), row); err != nil {
		t.Fatal(err)
	}
	return &downloadEnv{testEnv: e, dest: dest, destRow: row}
}

// publish posts the pieces of a file under names and indexes the package.
func (e *downloadEnv) publish(fileName string, names []string, pieces [][]byte, mutate ...func(*hoard.Package)) *hoard.Package {
	e.t.Helper()
	posted := e.dest.PostAll(e.t, names, pieces)
	p := &hoard.Package{FileName: fileName, FileSize: posted.Size, ArchiveType: hoard.ArchiveZIP, ContentHash: posted.SHA256,
		PartCount: len(pieces), DestChannelID: e.destRow.ID, DestMessageID: posted.IDs[0], DestMessageIDs: posted.IDs}
	for _, m := range mutate {
		m(p)
	}
	if err := e.db.CreatePackage(context.Background(), p); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// get sends a GET with extra headers and returns the answer whole.
func (e *downloadEnv) get(path string, cookie *http.Cookie, header map[string]string) (*http.Response, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.ts.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	resp, err := e.client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp, b
}

// A split package downloads from the browser as the original file, for
// every role, resumable with Range across its parts; anonymous visitors
// are sent to sign in.
func TestDownloadSplitPackageOverHTTP(t *testing.T) {
	e := newDownloadEnv(t)
	const piece = 3 << 19
	orig := messengertest.Noise(1, 2*piece+4321)
	pkg := e.publish("Drachen Größe.zip", []string{"Drachen Größe.zip.001", "Drachen Größe.zip.002", "Drachen Größe.zip.003"},
		[][]byte{orig[:piece], orig[piece : 2*piece], orig[2*piece:]})
	path := "/packages/" + strconv.FormatInt(pkg.ID, 10) + "/download"

	if resp, _ := e.get(path, nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("anonymous download = %d, want 303 to sign in", resp.StatusCode)
	}
	type answer struct {
		Status                                   int
		Length, Ranges, Disposition, ETag, Range string
		SHA                                      string
	}
	full := answer{Status: 200, Length: strconv.Itoa(len(orig)), Ranges: "bytes",
		Disposition: `attachment; filename="Drachen Gr__e.zip"; filename*=UTF-8''Drachen%20Gr%C3%B6%C3%9Fe.zip`,
		ETag:        `"` + pkg.ContentHash + `"`, SHA: pkg.ContentHash}
	for _, role := range []hoard.Role{hoard.RoleUser, hoard.RoleAdmin} {
		u, _ := e.user(role)
		resp, body := e.get(path, e.session(u), nil)
		sum := sha256.Sum256(body)
		got := answer{resp.StatusCode, resp.Header.Get("Content-Length"), resp.Header.Get("Accept-Ranges"),
			resp.Header.Get("Content-Disposition"), resp.Header.Get("ETag"), resp.Header.Get("Content-Range"), hex.EncodeToString(sum[:])}
		if got != full {
			t.Errorf("%s download:\n got %+v\nwant %+v", role, got, full)
		}
	}

	u, _ := e.user(hoard.RoleUser)
	cookie := e.session(u)
	from, to := piece-1000, 2*piece+10 // across both part boundaries
	resp, body := e.get(path, cookie, map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", from, to)})
	sum := sha256.Sum256(body)
	want := sha256.Sum256(orig[from : to+1])
	got := answer{Status: resp.StatusCode, Length: resp.Header.Get("Content-Length"), Range: resp.Header.Get("Content-Range"), SHA: hex.EncodeToString(sum[:])}
	if w := (answer{Status: 206, Length: strconv.Itoa(to - from + 1), Range: fmt.Sprintf("bytes %d-%d/%d", from, to, len(orig)), SHA: hex.EncodeToString(want[:])}); got != w {
		t.Errorf("range:\n got %+v\nwant %+v", got, w)
	}

	// An interrupted download resumes where it stopped and ends identical.
	head := orig[:piece+77]
	resp, rest := e.get(path, cookie, map[string]string{"Range": fmt.Sprintf("bytes=%d-", len(head)), "If-Range": full.ETag})
	if joined := append(bytes.Clone(head), rest...); resp.StatusCode != http.StatusPartialContent || !bytes.Equal(joined, orig) {
		t.Errorf("resume = %d, %d bytes: identical %v", resp.StatusCode, len(rest), bytes.Equal(joined, orig))
	}
}

// A group downloads as one ZIP whose advertised length is exact and
// whose entries are the packages, byte-identical.
func TestDownloadGroupZipOverHTTP(t *testing.T) {
	e := newDownloadEnv(t)
	a, b := messengertest.Noise(2, 400_000), messengertest.Noise(3, 5000)
	pa := e.publish("Knight.zip", []string{"Knight.zip"}, [][]byte{a})
	pb := e.publish("../Knight.zip", []string{"Knight.zip"}, [][]byte{b})
	g, err := e.db.CreateManualGroup(context.Background(), "Knights", []int64{pa.ID, pb.ID})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := e.user(hoard.RoleUser)
	resp, body := e.get("/groups/"+strconv.FormatInt(g.ID, 10)+"/download", e.session(u), nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Fatalf("group download = %d, Content-Length %q for %d bytes", resp.StatusCode, resp.Header.Get("Content-Length"), len(body))
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		got[f.Name] = len(data)
		if want := map[string][]byte{"Knight.zip": a, "Knight (2).zip": b}[f.Name]; !bytes.Equal(data, want) {
			t.Errorf("entry %q differs", f.Name)
		}
	}
	if want := map[string]int{"Knight.zip": len(a), "Knight (2).zip": len(b)}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("entries = %v, want %v", got, want)
	}
}

// rclone, with an app token as the password, lists the catalog over
// /dav/ and copies it byte-identical; without the token it gets nothing,
// and a revoked token stops working at once.
func TestWebDAVWithRcloneAndAToken(t *testing.T) {
	bin, err := exec.LookPath("rclone")
	if err != nil {
		t.Skip("rclone is not installed (apt-get install rclone): the WebDAV client test is skipped")
	}
	e := newDownloadEnv(t)
	const piece = 1 << 20
	big := messengertest.Noise(7, 2*piece+99)
	split := e.publish("Wyvern.zip", []string{"Wyvern.zip.001", "Wyvern.zip.002", "Wyvern.zip.003"},
		[][]byte{big[:piece], big[piece : 2*piece], big[2*piece:]})
	small := messengertest.Noise(8, 3000)
	other := e.publish("Goblin.stl", []string{"Goblin.stl"}, [][]byte{small})
	ctx := context.Background()
	if err := e.db.SetPackageCreator(ctx, []int64{split.ID, other.ID}, "Wyvern Works"); err != nil {
		t.Fatal(err)
	}
	u, _ := e.user(hoard.RoleUser)
	tok, secret, err := e.db.CreateAppToken(ctx, u.ID, "rclone")
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "rclone.conf")
	rclone := func(pass string, args ...string) (string, error) {
		obscured, err := exec.Command(bin, "obscure", pass).Output()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, append([]string{"--config", conf, "--webdav-url", e.ts.URL + "/dav/", "--webdav-vendor", "other",
			"--webdav-user", "me", "--webdav-pass", strings.TrimSpace(string(obscured)), "--retries", "1", "--low-level-retries", "1"}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return string(out) + stderr.String(), err
		}
		return string(out), nil
	}
	out, err := rclone(secret, "lsf", "-R", ":webdav:creators")
	if err != nil {
		t.Fatalf("rclone lsf: %v\n%s", err, out)
	}
	listed := strings.Split(strings.TrimSpace(out), "\n")
	slices.Sort(listed)
	if got, want := listed, []string{"Wyvern Works/", "Wyvern Works/Goblin.stl", "Wyvern Works/Wyvern.zip"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rclone lsf -R creators = %q, want %q", got, want)
	}
	dst := t.TempDir()
	if out, err := rclone(secret, "copy", ":webdav:creators/Wyvern Works", dst); err != nil {
		t.Fatalf("rclone copy: %v\n%s", err, out)
	}
	for name, want := range map[string][]byte{"Wyvern.zip": big, "Goblin.stl": small} {
		if got, err := os.ReadFile(filepath.Join(dst, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("copied %s: %d bytes (err %v), identical %v", name, len(got), err, bytes.Equal(got, want))
		}
	}
	if out, err := rclone("hoard_wrong", "lsf", ":webdav:"); err == nil {
		t.Errorf("a wrong token listed the catalog:\n%s", out)
	}
	if err := e.db.RevokeAppToken(ctx, tok.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	if out, err := rclone(secret, "lsf", ":webdav:"); err == nil {
		t.Errorf("a revoked token listed the catalog:\n%s", out)
	}
}

// A download manager's HEAD learns the length and the ETag without a
// body, and without reading the file.
func TestDownloadHead(t *testing.T) {
	e := newDownloadEnv(t)
	data := messengertest.Noise(9, 10_000)
	pkg := e.publish("head.stl", []string{"head.stl"}, [][]byte{data})
	u, _ := e.user(hoard.RoleUser)
	req, err := http.NewRequest(http.MethodHead, e.ts.URL+"/packages/"+strconv.FormatInt(pkg.ID, 10)+"/download", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(e.session(u))
	resp, err := e.client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	type head struct{ Status, Length, ETag, Ranges string }
	got := head{resp.Status, resp.Header.Get("Content-Length"), resp.Header.Get("ETag"), resp.Header.Get("Accept-Ranges")}
	if want := (head{"200 OK", "10000", `"` + pkg.ContentHash + `"`, "bytes"}); got != want {
		t.Fatalf("HEAD = %+v, want %+v", got, want)
	}
}

// A download whose post is gone says so; an administrator is offered
// Repair, a user is not.
func TestDownloadOfAGonePostOffersRepair(t *testing.T) {
	e := newDownloadEnv(t)
	// A package ingested from a source post, so that it can be repaired.
	pkg := e.publish("gone.stl", []string{"gone.stl"}, [][]byte{messengertest.Noise(10, 2000)},
		func(p *hoard.Package) { p.SourceMessageID = 5 })
	if err := e.dest.Account.DeleteMessages(context.Background(), e.dest.Channel, []int{int(pkg.DestMessageIDs[0])}); err != nil {
		t.Fatal(err)
	}
	type page struct {
		Status       int
		Says, Offers bool
	}
	for _, tc := range []struct {
		role hoard.Role
		want page
	}{
		{hoard.RoleUser, page{404, true, false}},
		{hoard.RoleAdmin, page{404, true, true}},
	} {
		u, _ := e.user(tc.role)
		resp, body := e.get("/packages/"+strconv.FormatInt(pkg.ID, 10)+"/download", e.session(u), nil)
		got := page{resp.StatusCode, bytes.Contains(body, []byte("is gone from the destination channel")),
			bytes.Contains(body, []byte(`href="/packages/`+strconv.FormatInt(pkg.ID, 10)+`#repair"`))}
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.role, got, tc.want)
		}
	}
}

// A selection downloads as one ZIP of its packages, one package as
// itself, and a selection naming a package that is gone is refused.
func TestDownloadSelection(t *testing.T) {
	e := newDownloadEnv(t)
	a, b := messengertest.Noise(11, 3000), messengertest.Noise(12, 4000)
	pa := e.publish("Orc.stl", []string{"Orc.stl"}, [][]byte{a})
	pb := e.publish("Troll.stl", []string{"Troll.stl"}, [][]byte{b})
	u, _ := e.user(hoard.RoleUser)
	cookie := e.session(u)
	ids := func(ids ...int64) string {
		q := "/packages/download?"
		for _, id := range ids {
			q += "id=" + strconv.FormatInt(id, 10) + "&"
		}
		return q
	}
	type answer struct {
		Status  int
		Entries string
	}
	for _, tc := range []struct {
		name string
		path string
		want answer
	}{
		{"two", ids(pb.ID, pa.ID), answer{200, "[Orc.stl:3000 Troll.stl:4000]"}},
		{"one", ids(pa.ID), answer{200, "Orc.stl:3000"}},
		{"one gone", ids(pa.ID, 999_999), answer{404, ""}},
	} {
		resp, body := e.get(tc.path, cookie, nil)
		got := answer{Status: resp.StatusCode}
		if resp.StatusCode == 200 {
			if zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body))); err == nil {
				var entries []string
				for _, f := range zr.File {
					entries = append(entries, fmt.Sprintf("%s:%d", f.Name, f.UncompressedSize64))
				}
				got.Entries = fmt.Sprint(entries)
			} else if bytes.Equal(body, a) {
				got.Entries = "Orc.stl:3000"
			}
		}
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
