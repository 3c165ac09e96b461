package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/hoard/hoard"
	"github.com/jackc/pgx/v5"
)

// SearchMode says how a search matched.
type SearchMode string

// Search modes.
const (
	// SearchRecent lists the newest packages (no text).
	SearchRecent SearchMode = "recent"
	// SearchFullText ranks matches of search_vector with ts_rank; the last
	// word matches as a prefix.
	SearchFullText SearchMode = "fulltext"
	// SearchWordPrefix serves 1–2 character queries: words starting with
	// the text, newest first. A substring shorter than 3 characters has no
	// trigram, so pg_trgm could only answer it with a scan of every row.
	SearchWordPrefix SearchMode = "prefix"
	// SearchSubstring is the case-insensitive substring match over file
	// names (pg_trgm index) used when full-text finds nothing.
	SearchSubstring SearchMode = "substring"
	// SearchFullTextNewest matches like SearchFullText but lists every
	// match newest first, for browsing past the ranked candidates.
	SearchFullTextNewest SearchMode = "fulltext_newest"
)

// SearchQuery is one catalog search: the same for the web catalog, the JSON
// API and the bot. Zero fields do not filter.
type SearchQuery struct {
	Text        string
	Creator     string   // exact, case-insensitive
	Tags        []string // every tag must be present
	ChannelID   int64
	ArchiveType hoard.ArchiveType
	Grouped     *bool // true: only grouped packages; false: only ungrouped
	HasPreview  *bool
	// GroupRows collapses the packages of a group into one row carrying the
	// group and its member count.
	GroupRows bool
	// Newest lists full-text matches newest first instead of by rank.
	Newest bool
	After  *SearchCursor
	Limit  int // default 24, at most 200

	// Extensions keeps packages whose file name ends with one of them,
	// case-insensitively (".stl"): the formats of a document kind.
	Extensions []string
}

// SearchCursor is a keyset position in a result list.
type SearchCursor struct {
	Mode SearchMode `json:"m"`
	Rank float32    `json:"r,omitempty"`
	Time int64      `json:"t,omitempty"` // created_at in µs since the epoch
	ID   int64      `json:"i"`           // package id, or group row key
}

// SearchHit is one result row: a package, or with GroupRows a group
// (Group set) represented by its best-matching package.
type SearchHit struct {
	Package hoard.Package
	Rank    float32
	// Group is set when the row stands for a whole group.
	Group *SearchGroup
}

// SearchGroup is the group a collapsed row stands for.
type SearchGroup struct {
	ID          int64
	Name        string
	MemberCount int
}

// SearchResult is a page of hits and the cursor of the next page.
type SearchResult struct {
	Mode SearchMode
	Hits []SearchHit
	Next *SearchCursor
	// Capped reports that more packages matched than the ranked candidate
	// set holds: the ranking covers the newest rankCandidates matches; sort
	// by newest (SearchQuery.Newest) to browse them all.
	Capped bool
}

// rankCandidates bounds the set that ts_rank orders: the most recent
// matches of a common word, all matches of a rarer one. Ranking every one of
// 100,000 matches costs 100+ ms; 200 keep every query shape within a few
// milliseconds at 1,000,000 packages (make bench) and fill eight pages.
const rankCandidates = 200

// SearchPackages runs a catalog search. Text of 3 or more characters is
// matched with full-text search (name > creator, tags > caption, the last
// word as a prefix) ordered by rank; when that finds nothing on the first
// page, a case-insensitive substring match over file names follows. Text of
// 1–2 characters matches words starting with it, newest first. No text
// lists the newest packages. Every shape is served by an index.
func (db *DB) SearchPackages(ctx context.Context, q SearchQuery) (*SearchResult, error) {
	if q.Limit <= 0 {
		q.Limit = 24
	}
	if q.Limit > 200 {
		q.Limit = 200
	}
	words := SearchWords(q.Text)
	mode := SearchRecent
	switch {
	case len(words) == 0:
	case len([]rune(strings.Join(words, ""))) < 3:
		mode = SearchWordPrefix
	case q.Newest:
		mode = SearchFullTextNewest
	default:
		mode = SearchFullText
	}
	if q.After != nil && q.After.Mode != "" {
		mode = q.After.Mode // a page continues the mode of the first page
	}
	res, err := db.search(ctx, q, mode, words)
	if err != nil {
		return nil, err
	}
	if (mode == SearchFullText || mode == SearchFullTextNewest) && len(res.Hits) == 0 && q.After == nil && len([]rune(strings.TrimSpace(q.Text))) >= 3 {
		return db.search(ctx, q, SearchSubstring, words)
	}
	return res, nil
}

// SearchWords splits text the way hoard_search_text splits file names:
// camel case, digits and letters kept together, everything else a break;
// lower-cased.
func SearchWords(text string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(text)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && len(cur) > 0 {
			prev := cur[len(cur)-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// tsQuery builds a to_tsquery expression from words that contain only
// letters and digits (SearchWords guarantees it): all words must match, the
// last as a prefix.
func tsQuery(words []string) string {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = w
		if i == len(words)-1 {
			parts[i] += ":*"
		}
	}
	return strings.Join(parts, " & ")
}

// commonMatches is the estimated number of full-text matches above which a
// filtered search walks the filter's index instead of the full-text index.
const commonMatches = 5000

// estimateMatches asks the planner how many packages a tsquery matches (its
// statistics on search_vector's lexemes); it plans, it does not execute.
func (db *DB) estimateMatches(ctx context.Context, tsq string) (float64, error) {
	var plan []byte
	err := db.q.QueryRow(ctx, `EXPLAIN (FORMAT JSON) SELECT 1 FROM packages WHERE search_vector @@ to_tsquery('english', $1)`,
		pgx.QueryExecModeExec, tsq).Scan(&plan)
	if err != nil {
		return 0, wrap("estimate search matches", err)
	}
	var out []struct {
		Plan struct {
			Rows float64 `json:"Plan Rows"`
		} `json:"Plan"`
	}
	if err := json.Unmarshal(plan, &out); err != nil || len(out) == 0 {
		return 0, fmt.Errorf("estimate search matches: unexpected plan %q", plan)
	}
	return out[0].Plan.Rows, nil
}

// search builds and runs one query shape.
func (db *DB) search(ctx context.Context, q SearchQuery, mode SearchMode, words []string) (*SearchResult, error) {
	var args []any
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }

	var filters []string
	if q.Creator != "" {
		filters = append(filters, "lower(p.creator) = lower("+arg(strings.TrimSpace(q.Creator))+")")
	}
	if len(q.Tags) > 0 {
		filters = append(filters, "p.tags @> "+arg(q.Tags)+"::text[]")
	}
	if q.ChannelID != 0 {
		filters = append(filters, "p.source_channel_id = "+arg(q.ChannelID))
	}
	if q.ArchiveType != "" {
		filters = append(filters, "p.archive_type = "+arg(string(q.ArchiveType)))
	}
	if len(q.Extensions) > 0 {
		filters = append(filters, extensionFilter("p", arg, q.Extensions))
	}
	if q.Grouped != nil {
		if *q.Grouped {
			filters = append(filters, "p.package_group_id IS NOT NULL")
		} else {
			filters = append(filters, "p.package_group_id IS NULL")
		}
	}
	if q.HasPreview != nil {
		filters = append(filters, "p.has_preview = "+arg(*q.HasPreview))
	}

	// match: the text condition; order: the ranking expression.
	var match, rank string
	switch mode {
	case SearchFullText:
		tsq := "to_tsquery('english', " + arg(tsQuery(words)) + ")"
		match = "p.search_vector @@ " + tsq
		rank = "ts_rank(p.search_vector, " + tsq + ")"
	case SearchFullTextNewest:
		match = "p.search_vector @@ to_tsquery('english', " + arg(tsQuery(words)) + ")"
	case SearchWordPrefix:
		match = "p.search_vector @@ to_tsquery('simple', " + arg(tsQuery(words)) + ")"
	case SearchSubstring:
		match = "p.file_name ILIKE " + arg("%"+escapeLike(strings.TrimSpace(q.Text))+"%")
	}
	where := append([]string{"true"}, filters...)
	if match != "" {
		where = append(where, match)
	}

	if mode != SearchFullText {
		return db.searchByTime(ctx, q, mode, where, args)
	}

	// Full-text: the newest matches form a bounded candidate set, which is
	// ranked; group rows keep each group's best-ranked member.
	candidates := `SELECT p.id, p.created_at, p.package_group_id, ` + rank + ` AS rank
		FROM packages p WHERE ` + strings.Join(where, " AND ") + `
		ORDER BY p.created_at DESC, p.id DESC LIMIT ` + fmt.Sprint(rankCandidates)
	if len(filters) > 0 && (q.Creator != "" || q.ChannelID != 0) {
		// A creator or channel filter with words that match many packages:
		// the planner intersects the filter's index with the full-text
		// index, and decoding the posting lists of common words dominates
		// (tens of ms at 1M packages). Walking the filter's index newest
		// first and testing the words row by row stops after rankCandidates
		// matches. The OFFSET 0 fence keeps the planner from pushing the
		// text condition into the scan. Rare words keep the index plan.
		// Estimated on the words as whole words: PostgreSQL has lexeme
		// statistics for those, but a fixed guess for prefixes.
		n, err := db.estimateMatches(ctx, strings.Join(words, " & "))
		if err != nil {
			return nil, err
		}
		if n > commonMatches {
			candidates = `SELECT p.id, p.created_at, p.package_group_id, ` + rank + ` AS rank
				FROM (SELECT * FROM packages p WHERE ` + strings.Join(append([]string{"true"}, filters...), " AND ") + `
				      ORDER BY p.created_at DESC, p.id DESC OFFSET 0) p
				WHERE ` + match + `
				ORDER BY p.created_at DESC, p.id DESC LIMIT ` + fmt.Sprint(rankCandidates)
		}
	}
	rows := `SELECT c.id AS row_key, c.id, c.rank FROM candidates c`
	if q.GroupRows {
		key := "coalesce(-c.package_group_id, c.id)" // group rows get negative keys
		rows = `SELECT DISTINCT ON (` + key + `) ` + key + ` AS row_key, c.id, c.rank
			FROM candidates c ORDER BY ` + key + `, c.rank DESC, c.created_at DESC, c.id DESC`
	}
	after := ""
	if q.After != nil {
		after = fmt.Sprintf("WHERE (r.rank, r.row_key) < (%s::real, %s)", arg(q.After.Rank), arg(q.After.ID))
	}
	sql := `WITH candidates AS MATERIALIZED (` + candidates + `), r AS (` + rows + `)
		SELECT r.row_key, r.rank, (SELECT count(*) FROM candidates) >= ` + fmt.Sprint(rankCandidates) + ` AS capped, ` + prefixedPackageColumns + `, ` + groupRowColumns + `
		FROM r JOIN packages p ON p.id = r.id
		LEFT JOIN package_groups g ON g.id = p.package_group_id AND r.row_key < 0
		` + after + `
		ORDER BY r.rank DESC, r.row_key DESC LIMIT ` + arg(q.Limit+1)
	return db.runSearch(ctx, q, mode, sql, args)
}

// groupRowColumns names the group of a collapsed row and counts its members.
const groupRowColumns = `coalesce(g.name, '') AS group_name,
	CASE WHEN g.id IS NULL THEN 0 ELSE (SELECT count(*) FROM packages m WHERE m.package_group_id = g.id) END AS group_members`

// searchByTime serves the shapes ordered newest first. With group rows, a
// group is represented by its newest matching member, so every group
// appears once across pages.
func (db *DB) searchByTime(ctx context.Context, q SearchQuery, mode SearchMode, where []string, args []any) (*SearchResult, error) {
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	rowKey := "p.id"
	if q.GroupRows {
		rowKey = "coalesce(-p.package_group_id, p.id)"
		newer := []string{"n.package_group_id = p.package_group_id", "(n.created_at, n.id) > (p.created_at, p.id)"}
		for _, w := range where[1:] { // the same filters and text match, on n
			newer = append(newer, strings.ReplaceAll(w, "p.", "n."))
		}
		where = append(where, "(p.package_group_id IS NULL OR NOT EXISTS (SELECT 1 FROM packages n WHERE "+
			strings.Join(newer, " AND ")+"))")
	}
	if q.After != nil {
		where = append(where, fmt.Sprintf("(p.created_at, p.id) < (%s, %s)", arg(time.UnixMicro(q.After.Time)), arg(q.After.ID)))
	}
	sql := `SELECT ` + rowKey + ` AS row_key, 0::real AS rank, false AS capped, ` + prefixedPackageColumns + `, ` + groupRowColumns + `
		FROM packages p LEFT JOIN package_groups g ON g.id = p.package_group_id AND ` + fmt.Sprint(q.GroupRows) + `
		WHERE ` + strings.Join(where, " AND ") + `
		ORDER BY p.created_at DESC, p.id DESC LIMIT ` + arg(q.Limit+1)
	return db.runSearch(ctx, q, mode, sql, args)
}

// runSearch runs a search query and cuts the page. Search queries run with
// QueryExecModeExec so that PostgreSQL plans each with its real parameters:
// a cached generic plan can pick an index scan that returns every row for a
// short pattern (the generic-plan trap).
func (db *DB) runSearch(ctx context.Context, q SearchQuery, mode SearchMode, sql string, args []any) (*SearchResult, error) {
	pgRows, err := db.q.Query(ctx, sql, append([]any{pgx.QueryExecModeExec}, args...)...)
	if err != nil {
		return nil, wrap("search packages", err)
	}
	type row struct {
		RowKey       int64
		Rank         float32
		Capped       bool
		GroupName    string
		GroupMembers int
		hoard.Package
	}
	got, err := pgx.CollectRows(pgRows, pgx.RowToStructByNameLax[row])
	if err != nil {
		return nil, wrap("search packages", err)
	}
	res := &SearchResult{Mode: mode}
	for i, r := range got {
		res.Capped = res.Capped || r.Capped
		if i == q.Limit {
			last := got[i-1]
			res.Next = &SearchCursor{Mode: mode, Rank: last.Rank, Time: last.CreatedAt.UnixMicro(), ID: last.RowKey}
			if mode != SearchFullText {
				res.Next.ID = last.ID // time-ordered pages continue after a package
			}
			break
		}
		hit := SearchHit{Package: r.Package, Rank: r.Rank}
		if r.RowKey < 0 {
			hit.Group = &SearchGroup{ID: -r.RowKey, Name: r.GroupName, MemberCount: r.GroupMembers}
		}
		res.Hits = append(res.Hits, hit)
	}
	return res, nil
}

// prefixedPackageColumns is packageColumns read from alias p.
var prefixedPackageColumns = qualifyColumns("p.", packageColumns)

// qualifyColumns prefixes the column references of a select list that may
// hold coalesce(column, default) AS name expressions.
func qualifyColumns(alias, list string) string {
	var out []string
	for _, item := range splitTopLevel(list) {
		item = strings.TrimSpace(item)
		if strings.HasPrefix(item, "coalesce(") {
			out = append(out, "coalesce("+alias+strings.TrimPrefix(item, "coalesce("))
		} else {
			out = append(out, alias+item)
		}
	}
	return strings.Join(out, ", ")
}

// splitTopLevel splits a select list at commas outside parentheses.
func splitTopLevel(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// FileSearchHit is a package whose archive holds files whose paths match a
// query, with how many of its files matched.
type FileSearchHit struct {
	Package      hoard.Package
	MatchedFiles int
}

// SearchPackageFiles finds packages by the paths of the files inside them: a
// case-insensitive substring of 3 or more characters (pg_trgm index on
// package_files.path). Newest packages first; beforeID pages (0 = from the
// start); the second result is the beforeID of the next page (0 at the end).
func (db *DB) SearchPackageFiles(ctx context.Context, text string, beforeID int64, limit int) ([]FileSearchHit, int64, error) {
	text = strings.TrimSpace(text)
	if len([]rune(text)) < 3 {
		return nil, 0, hoard.Errorf(hoard.EINVALID, "Searching inside archives needs at least 3 characters.")
	}
	if limit <= 0 || limit > 200 {
		limit = 24
	}
	rows, err := db.q.Query(ctx, `
		SELECT m.n AS matched_files, `+prefixedPackageColumns+`
		FROM (SELECT package_id, count(*) AS n FROM package_files
		      WHERE path ILIKE $1 AND ($2::bigint = 0 OR package_id < $2)
		      GROUP BY package_id ORDER BY package_id DESC LIMIT $3) m
		JOIN packages p ON p.id = m.package_id
		ORDER BY p.id DESC`, pgx.QueryExecModeExec, "%"+escapeLike(text)+"%", beforeID, limit+1)
	if err != nil {
		return nil, 0, wrap("search package files", err)
	}
	type row struct {
		MatchedFiles int
		hoard.Package
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByNameLax[row])
	if err != nil {
		return nil, 0, wrap("search package files", err)
	}
	var next int64
	if len(got) > limit {
		got = got[:limit]
		next = got[limit-1].ID
	}
	hits := make([]FileSearchHit, len(got))
	for i, r := range got {
		hits[i] = FileSearchHit{Package: r.Package, MatchedFiles: r.MatchedFiles}
	}
	return hits, next, nil
}
