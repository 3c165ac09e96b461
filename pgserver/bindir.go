package pgserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrNoPostgres reports that no usable PostgreSQL installation (initdb, postgres and
// pg_ctl in one bin directory) was found. FindBinDir and Start return it wrapped; test
// for it with errors.Is.
var ErrNoPostgres = errors.New("no PostgreSQL installation found (initdb/postgres/pg_ctl): install PostgreSQL (e.g. apt-get install postgresql) or set DATABASE_URL")

// requiredBinaries are the programs a bin directory must hold to count as an
// installation. pg_ctl is not run by this package but its presence tells a server
// installation apart from a client-only one.
var requiredBinaries = []string{"initdb", "postgres", "pg_ctl"}

// debianRoot is where Debian and Ubuntu install one directory per major version.
const debianRoot = "/usr/lib/postgresql"

// FindBinDir returns the directory that holds the PostgreSQL server binaries.
//
// It tries, in order: `pg_config --bindir` (pg_config looked up on PATH), the
// highest-version /usr/lib/postgresql/*/bin, and the directory of an initdb found on
// PATH (Fedora, Alpine and Homebrew install the server there without pg_config). A
// candidate counts only if it holds initdb, postgres and pg_ctl. When none does, the
// error wraps ErrNoPostgres.
func FindBinDir() (string, error) {
	return findBinDir(os.Getenv("PATH"), debianRoot)
}

// findBinDir is FindBinDir with the search path and the per-version root as
// parameters, so that tests can make every source come up empty.
func findBinDir(pathList, root string) (string, error) {
	if pgConfig := lookPathIn("pg_config", pathList); pgConfig != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, err := exec.CommandContext(ctx, pgConfig, "--bindir").Output()
		cancel()
		if err == nil {
			if dir := strings.TrimSpace(string(out)); dir != "" && missingBinary(dir) == "" {
				return dir, nil
			}
		}
	}
	if dir := highestVersionBinDir(root); dir != "" {
		return dir, nil
	}
	if initdb := lookPathIn("initdb", pathList); initdb != "" {
		if dir := filepath.Dir(initdb); missingBinary(dir) == "" {
			return dir, nil
		}
	}
	return "", fmt.Errorf("pgserver: find bin dir (pg_config --bindir, %s/*/bin, PATH): %w", root, ErrNoPostgres)
}

// checkBinDir verifies an explicitly configured bin directory.
func checkBinDir(dir string) error {
	if name := missingBinary(dir); name != "" {
		return fmt.Errorf("pgserver: bin dir %s has no executable %s: %w", dir, name, ErrNoPostgres)
	}
	return nil
}

// missingBinary returns the first required binary that dir lacks, or "" when it has
// them all.
func missingBinary(dir string) string {
	for _, name := range requiredBinaries {
		if !isExecutable(filepath.Join(dir, name)) {
			return name
		}
	}
	return ""
}

// lookPathIn is exec.LookPath over an explicit PATH value. Empty elements (the
// current directory) are skipped on purpose: we never run a binary from the cwd.
func lookPathIn(name, pathList string) string {
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		if p := filepath.Join(dir, name); isExecutable(p) {
			return p
		}
	}
	return ""
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// highestVersionBinDir returns root/<version>/bin for the highest version directory
// that holds every required binary, or "" when there is none.
func highestVersionBinDir(root string) string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return ""
	}
	var best []int
	bestDir := ""
	for _, e := range entries {
		v, ok := parseVersion(e.Name())
		if !ok {
			continue
		}
		dir := filepath.Join(root, e.Name(), "bin")
		if missingBinary(dir) != "" {
			continue
		}
		if bestDir == "" || compareVersions(v, best) > 0 {
			best, bestDir = v, dir
		}
	}
	return bestDir
}

// parseVersion parses "15" or "9.6" into its numeric parts.
func parseVersion(s string) ([]int, bool) {
	parts := strings.Split(s, ".")
	v := make([]int, 0, len(parts))
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, false
		}
		v = append(v, n)
	}
	return v, len(v) > 0
}

func compareVersions(a, b []int) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// majorVersion turns "15.20" into "15" and "9.6.24" into "9.6", matching the
// content of a cluster's PG_VERSION file.
func majorVersion(full string) string {
	parts := strings.Split(full, ".")
	if n, err := strconv.Atoi(parts[0]); err == nil && n < 10 && len(parts) > 1 {
		return parts[0] + "." + parts[1]
	}
	return parts[0]
}
