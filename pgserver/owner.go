package pgserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// identity is the OS user that runs initdb and postgres.
type identity struct {
	name   string
	uid    uint32
	gid    uint32
	groups []uint32
	// cred is set when we are root and switch to name for the child processes; nil
	// when the children run as the current user.
	cred *syscall.Credential
}

// resolveIdentity picks the OS user for initdb and postgres: the current user, or
// runAs when we are root (PostgreSQL refuses to run as root).
func resolveIdentity(runAs string) (identity, error) {
	if os.Geteuid() != 0 {
		id := identity{uid: uint32(os.Geteuid()), gid: uint32(os.Getegid())}
		if u, err := user.Current(); err == nil {
			id.name = u.Username
		}
		groups, _ := os.Getgroups()
		for _, g := range groups {
			id.groups = append(id.groups, uint32(g))
		}
		return id, nil
	}
	u, err := user.Lookup(runAs)
	if err != nil {
		return identity{}, fmt.Errorf("pgserver: running as root, so PostgreSQL must run as OS user %q, which cannot be found (%v): install PostgreSQL (its package creates %q), set the user to run as, or set DATABASE_URL", runAs, err, runAs)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return identity{}, fmt.Errorf("pgserver: OS user %q has non-numeric uid/gid %s/%s", runAs, u.Uid, u.Gid)
	}
	if uid == 0 {
		return identity{}, fmt.Errorf("pgserver: OS user %q is root, and PostgreSQL refuses to run as root: choose an unprivileged user", runAs)
	}
	id := identity{name: runAs, uid: uint32(uid), gid: uint32(gid)}
	if gids, err := u.GroupIds(); err == nil {
		for _, g := range gids {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil {
				id.groups = append(id.groups, uint32(n))
			}
		}
	}
	id.cred = &syscall.Credential{Uid: id.uid, Gid: id.gid, Groups: id.groups}
	return id, nil
}

// switches reports whether the children run as another user than this process.
func (id identity) switches() bool { return id.cred != nil }

// canTraverse reports whether id may search (enter) a directory with the given
// owner and mode by the classic permission bits. ACLs are not consulted.
func (id identity) canTraverse(st *syscall.Stat_t) bool {
	mode := st.Mode
	switch {
	case st.Uid == id.uid:
		return mode&0o100 != 0
	case id.inGroup(st.Gid):
		return mode&0o010 != 0
	default:
		return mode&0o001 != 0
	}
}

func (id identity) inGroup(gid uint32) bool {
	if gid == id.gid {
		return true
	}
	for _, g := range id.groups {
		if g == gid {
			return true
		}
	}
	return false
}

// checkTraversable verifies that id can reach dir, that is search every ancestor of
// dir. dir itself is not checked: we own it. We never change the mode of a directory
// we did not create, because loosening, say, /root to reach a DATA_DIR below it
// would silently expose everything else in it; the error says what to do instead.
func checkTraversable(dir string, id identity) error {
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("pgserver: stat %s: %w", p, err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if ok && !id.canTraverse(st) {
			return fmt.Errorf("pgserver: PostgreSQL runs as OS user %q (uid %d), which cannot enter directory %s (mode %04o, owner uid %d) on the way to %s: set DATA_DIR to a directory that user can reach (e.g. under /var/lib or /srv), allow it in with `chmod o+x %s`, or set DATABASE_URL to use another PostgreSQL server",
				id.name, id.uid, p, fi.Mode().Perm(), st.Uid, dir, p)
		}
		if filepath.Dir(p) == p {
			return nil
		}
	}
}

// ensureDir creates dir with mode perm and any missing parents. When the children
// run as another user, the parents we create ourselves get mode 0755 whatever the
// umask, so that user can reach dir; existing directories are left alone.
func ensureDir(dir string, perm os.FileMode, id identity) error {
	var missing []string
	for p := dir; ; p = filepath.Dir(p) {
		_, err := os.Stat(p)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("pgserver: stat %s: %w", p, err)
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		mode := os.FileMode(0o755)
		if i == 0 {
			mode = perm
		}
		err := os.Mkdir(missing[i], mode)
		if errors.Is(err, fs.ErrExist) {
			continue // a concurrent creator won
		}
		if err != nil {
			return fmt.Errorf("pgserver: create %s: %w", missing[i], err)
		}
		if id.switches() {
			if err := os.Chmod(missing[i], mode); err != nil {
				return fmt.Errorf("pgserver: chmod %s: %w", missing[i], err)
			}
		}
	}
	return nil
}

// ownerOf returns the uid that owns path.
func ownerOf(path string) (uint32, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fmt.Errorf("no owner information for %s", path)
	}
	return st.Uid, nil
}

// chownTree gives every file under root to id, without following symlinks.
func chownTree(root string, id identity) error {
	return filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(id.uid), int(id.gid))
	})
}
