package store

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/jackc/pgx/v5"
)

// FileIndexVersion tells whether a FileIndex still describes its package's
// listing: ReplacePackageFiles, the only writer of listings, sets both in
// the transaction that replaces one.
type FileIndexVersion struct {
	UpdatedAt time.Time
	FileCount int
}

// Equal reports whether two versions are the same.
func (v FileIndexVersion) Equal(o FileIndexVersion) bool {
	return v.FileCount == o.FileCount && v.UpdatedAt.Equal(o.UpdatedAt)
}

// FileIndex is a package's archive entries' paths, lower-cased by
// PostgreSQL as ILIKE compares them, in listing order and in one string,
// for searches that would read the whole listing in the database (issue
// #26: a fragment whose trigrams are common, or a text of one or two
// characters, read all 100,000 entries of a big archive per request, 30 to
// 90 ms of the database's CPU; the trigram index cannot narrow such a
// search down, with the package's id beside it or not). Matching the
// string in memory costs a few milliseconds per 100,000 entries whatever
// the text. A FileIndex is immutable, and safe for concurrent use.
type FileIndex struct {
	Version  FileIndexVersion
	paths    string  // "\x00" + each lower-cased path + "\x00"; PostgreSQL text holds no NUL
	starts   []int32 // where each entry's path begins in paths
	ordinals []int32 // each entry's ordinal, ascending
}

// Size is the memory the index holds, in bytes (roughly).
func (x *FileIndex) Size() int64 { return int64(len(x.paths) + 8*len(x.starts) + 64) }

// Find returns the ordinals of up to limit entries after afterOrdinal, in
// listing order, whose lower-cased path contains lowerQuery (as lowered by
// FileSearchVersion): the entries ListPackageFiles would list.
func (x *FileIndex) Find(lowerQuery string, afterOrdinal, limit int) []int32 {
	if lowerQuery == "" || limit <= 0 || strings.IndexByte(lowerQuery, 0) >= 0 {
		return nil
	}
	i := sort.Search(len(x.ordinals), func(i int) bool { return int(x.ordinals[i]) > afterOrdinal })
	var found []int32
	for i < len(x.starts) && len(found) < limit {
		j := strings.Index(x.paths[x.starts[i]:], lowerQuery)
		if j < 0 {
			break
		}
		at := int(x.starts[i]) + j
		// The entry that holds the match: the last one starting at or
		// before it (a match never spans two: no path holds the NUL).
		i += sort.Search(len(x.starts)-i, func(k int) bool { return int(x.starts[i+k]) > at }) - 1
		found = append(found, x.ordinals[i])
		i++
	}
	return found
}

// LoadFileIndex reads a package's FileIndex: its version and its lower-cased
// paths in one statement, so that they agree. An unknown package is
// ENOTFOUND.
func (db *DB) LoadFileIndex(ctx context.Context, packageID int64) (*FileIndex, error) {
	rows, err := db.q.Query(ctx, `SELECT p.updated_at, p.file_count, f.ordinal, lower(f.path)
		FROM packages p LEFT JOIN package_files f ON f.package_id = p.id
		WHERE p.id = $1 ORDER BY f.ordinal`, packageID)
	if err != nil {
		return nil, wrap("load file index", err)
	}
	defer rows.Close()
	var b fileIndexBuilder
	found := false
	for rows.Next() {
		var ordinal *int32
		var path *string
		if err := rows.Scan(&b.x.Version.UpdatedAt, &b.x.Version.FileCount, &ordinal, &path); err != nil {
			return nil, wrap("load file index", err)
		}
		found = true
		if ordinal == nil || path == nil {
			continue // a package without entries
		}
		b.add(*ordinal, *path)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("load file index", err)
	}
	if !found {
		return nil, hoard.Errorf(hoard.ENOTFOUND, "load file index: package %d not found", packageID)
	}
	return b.done(), nil
}

// NewFileIndex returns the FileIndex of version v over entries in listing
// order: ordinals ascending, lowerPaths lower-cased as PostgreSQL's lower()
// does (NULs are dropped: no stored path holds one).
func NewFileIndex(v FileIndexVersion, ordinals []int32, lowerPaths []string) *FileIndex {
	b := fileIndexBuilder{x: FileIndex{Version: v}}
	for i, o := range ordinals {
		b.add(o, strings.ReplaceAll(lowerPaths[i], "\x00", ""))
	}
	return b.done()
}

// fileIndexBuilder makes a FileIndex from its entries in listing order.
type fileIndexBuilder struct {
	x     FileIndex
	paths strings.Builder
}

// add appends an entry; lowerPath holds no NUL (PostgreSQL text cannot).
func (b *fileIndexBuilder) add(ordinal int32, lowerPath string) {
	if b.paths.Len() == 0 {
		b.paths.WriteByte(0)
	}
	b.x.starts = append(b.x.starts, int32(b.paths.Len()))
	b.x.ordinals = append(b.x.ordinals, ordinal)
	b.paths.WriteString(lowerPath)
	b.paths.WriteByte(0)
}

func (b *fileIndexBuilder) done() *FileIndex {
	b.x.paths = b.paths.String()
	return &b.x
}

// FileSearchVersion returns the version of a package's listing, to check a
// FileIndex against, and query lower-cased as PostgreSQL lower-cases paths
// (its locale's rules, not Go's). An unknown package is ENOTFOUND.
func (db *DB) FileSearchVersion(ctx context.Context, packageID int64, query string) (FileIndexVersion, string, error) {
	var v FileIndexVersion
	var lower string
	err := db.q.QueryRow(ctx, `SELECT updated_at, file_count, lower($2) FROM packages WHERE id = $1`, packageID, query).
		Scan(&v.UpdatedAt, &v.FileCount, &lower)
	if err != nil {
		return FileIndexVersion{}, "", wrap("file search version", err)
	}
	return v, lower, nil
}

// ListPackageFilesAt returns the entries of a package at the given ordinals
// whose path contains query (case-insensitive, as ListPackageFiles
// matches), in listing order: the page a FileIndex found, checked again
// against the rows, so that a listing replaced since the index was read
// yields no entry that does not match.
func (db *DB) ListPackageFilesAt(ctx context.Context, packageID int64, ordinals []int32, query string) ([]hoard.PackageFile, error) {
	if len(ordinals) == 0 {
		return []hoard.PackageFile{}, nil // as getAll lists nothing
	}
	return getAll[hoard.PackageFile](ctx, db.q, "list package files at", `SELECT `+packageFileColumns+` FROM package_files
		WHERE package_id = $1 AND ordinal = ANY($2) AND strpos(lower(path), lower($3)) > 0 ORDER BY ordinal`,
		pgx.QueryExecModeExec, packageID, ordinals, query)
}
