package store

import (
	"context"
	"math"
	"path"
	"strings"

	"github.com/hoard/hoard"
	"github.com/jackc/pgx/v5"
)

// ReplacePackageFiles stores the file listing of a package, replacing any
// earlier one, and updates the package's file count. Rows go through COPY:
// a listing may hold hundreds of thousands of entries. FileName and
// Extension are derived from Path when empty; Ordinal is the slice index.
func (db *DB) ReplacePackageFiles(ctx context.Context, packageID int64, files []hoard.PackageFile) error {
	return db.InTx(ctx, func(tx *DB) error {
		// The count first: it locks the package row, so concurrent
		// replacements of one listing take turns, and an unknown package is
		// ENOTFOUND before anything is written (not a foreign-key EINVALID
		// from the COPY).
		tag, err := tx.q.Exec(ctx, `UPDATE packages SET file_count = $2, updated_at = now() WHERE id = $1`, packageID, len(files))
		if err := notFoundIfNone("replace package files", tag, err); err != nil {
			return err
		}
		if _, err := tx.q.Exec(ctx, `DELETE FROM package_files WHERE package_id = $1`, packageID); err != nil {
			return wrap("replace package files", err)
		}
		rows := make([][]any, len(files))
		for i, f := range files {
			name := f.FileName
			if name == "" {
				name = path.Base(strings.TrimSuffix(f.Path, "/"))
			}
			ext := f.Extension
			if ext == "" {
				ext = strings.TrimPrefix(strings.ToLower(path.Ext(name)), ".")
			}
			var crc any
			if f.CRC32 != nil {
				crc = int64(*f.CRC32)
			}
			rows[i] = []any{packageID, i, f.Path, name, ext, f.Size, f.CompressedSize, crc}
		}
		if _, err := tx.q.CopyFrom(ctx, pgx.Identifier{"package_files"},
			[]string{"package_id", "ordinal", "path", "file_name", "extension", "size", "compressed_size", "crc32"},
			pgx.CopyFromRows(rows)); err != nil {
			return wrap("replace package files", err)
		}
		return nil
	})
}

// packageFileColumns are package_files' columns in hoard.PackageFile's
// order.
const packageFileColumns = `id, package_id, ordinal, path, file_name, extension, size, compressed_size, crc32`

// indexedQueryRunes is how much of a file search's text the trigram index
// is asked for: each trigram of the pattern is one lookup in the index, and
// a 200-character text has some 170 where the first 30 already find the
// few entries that can match.
const indexedQueryRunes = 32

// ListPackageFiles returns up to limit entries of a package in listing order
// after the given ordinal (-1 = from the start); query, when not empty,
// keeps entries whose path contains it (case-insensitive). The filtered
// listing is planned with the query's own text (QueryExecModeExec): a
// cached generic plan would read every entry of the package through the
// ordinal index and match each, where the path's trigram index finds a
// rare text at once; with the text in hand PostgreSQL takes the ordinal
// index only for a common text, which matches within the first entries. A
// long text is looked up by its first indexedQueryRunes characters and
// matched whole on the entries found (strpos of the lower-cased text, the
// comparison ILIKE makes, which the index does not serve).
func (db *DB) ListPackageFiles(ctx context.Context, packageID int64, afterOrdinal, limit int, query string) ([]hoard.PackageFile, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	if afterOrdinal >= math.MaxInt32 {
		return nil, nil // ordinals are INTEGERs: nothing comes after this one
	}
	afterOrdinal = max(afterOrdinal, -1)
	const columns = packageFileColumns
	if query == "" {
		return getAll[hoard.PackageFile](ctx, db.q, "list package files", `SELECT `+columns+` FROM package_files
			WHERE package_id = $1 AND ordinal > $2 ORDER BY ordinal LIMIT $3`, packageID, afterOrdinal, limit)
	}
	head, whole := query, ""
	if r := []rune(query); len(r) > indexedQueryRunes {
		head, whole = string(r[:indexedQueryRunes]), `AND strpos(lower(path), lower($5)) > 0`
	}
	args := []any{pgx.QueryExecModeExec, packageID, afterOrdinal, limit, "%" + escapeLike(head) + "%"}
	if whole != "" {
		args = append(args, query)
	}
	return getAll[hoard.PackageFile](ctx, db.q, "list package files", `SELECT `+columns+` FROM package_files
		WHERE package_id = $1 AND ordinal > $2 AND path ILIKE $4 `+whole+` ORDER BY ordinal LIMIT $3`, args...)
}

// escapeLike escapes LIKE wildcards so user input matches literally.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
