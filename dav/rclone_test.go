package dav

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestRclone lists and copies the tree with rclone, a WebDAV client that
// people mount and sync with.
func TestRclone(t *testing.T) {
	bin, err := exec.LookPath("rclone")
	if err != nil {
		t.Skip("rclone is not installed (apt-get install rclone): the test of a real WebDAV client is skipped")
	}
	f := newFixture(t)
	conf := filepath.Join(t.TempDir(), "rclone.conf")
	rclone := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--config", conf, "--webdav-url", f.srv.URL + "/dav/", "--webdav-vendor", "other",
			"--retries", "1", "--low-level-retries", "1"}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("rclone %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
		}
		return string(out)
	}

	var want []string
	for _, d := range tree {
		for _, it := range d.want {
			p := strings.TrimPrefix(d.dir, "/dav/") + it.Name
			if it.Dir {
				p += "/"
			}
			want = append(want, p)
		}
	}
	slices.Sort(want)
	got := strings.Split(strings.TrimSpace(rclone("lsf", "-R", ":webdav:")), "\n")
	slices.Sort(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rclone lsf -R =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	dst := t.TempDir()
	rclone("copy", ":webdav:", dst)
	var copied []string
	err = filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dst, p)
		copied = append(copied, filepath.ToSlash(rel))
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Equal(data, f.bytes[fileKeys[d.Name()]]) {
			t.Errorf("rclone copy: %s has %d bytes unlike the package's %d", rel, len(data), len(f.bytes[fileKeys[d.Name()]]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var wantFiles []string
	for _, p := range want {
		if !strings.HasSuffix(p, "/") {
			wantFiles = append(wantFiles, p)
		}
	}
	slices.Sort(copied)
	if !reflect.DeepEqual(copied, wantFiles) {
		t.Errorf("rclone copy wrote\n%s\nwant\n%s", strings.Join(copied, "\n"), strings.Join(wantFiles, "\n"))
	}
}
