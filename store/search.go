package store

import (
	"context"
	"strings"
	"unicode"

	"github.com/hoard/hoard"
	"github.com/jackc/pgx/v5"
)

// SearchMode says how a search matched.
type SearchMode string

// Search modes.
const (
	// SearchRecent lists the packages without text: newest first, or by
	// name or size.
	SearchRecent SearchMode = "recent"
	// SearchFullText matches search_vector (every word as a prefix) and
	// the paths of the files inside archives; the newest rankCandidates
	// matches of each are ordered by rank (path-only matches last), name
	// or size.
	SearchFullText SearchMode = "fulltext"
	// SearchShort serves 1–2 character queries: names holding the text
	// anywhere inside a word (the bigram index of migration 019), newest
	// first, or by name or size.
	SearchShort SearchMode = "short"
	// SearchSubstring is the case-insensitive substring match over file
	// names (pg_trgm index) used when full-text finds nothing.
	SearchSubstring SearchMode = "substring"
	// SearchFullTextNewest matches names, creators, tags and captions like
	// SearchFullText and lists every match newest first, for browsing past
	// the ranked candidates (file paths are matched by relevance only).
	SearchFullTextNewest SearchMode = "fulltext_newest"
)

// SearchSort is the order of a search's results.
type SearchSort string

// Search orders.
const (
	// SortRelevance ranks text matches (the zero value means it too);
	// without text, and for 1–2 characters, it lists the newest first.
	SortRelevance SearchSort = "relevance"
	// SortNewest lists every match newest first.
	SortNewest SearchSort = "newest"
	// SortName lists by file name, case-insensitively, A to Z.
	SortName SearchSort = "name"
	// SortSize lists the largest first.
	SortSize SearchSort = "size"
)

// SearchSorts are the orders a search takes, in the order a form offers
// them.
var SearchSorts = []SearchSort{SortRelevance, SortNewest, SortName, SortSize}

// SearchQuery is one catalog search: the same for the web catalog, the JSON
// API and the bot. Zero fields do not filter.
type SearchQuery struct {
	Text string
	// Creator keeps packages whose creator starts with it, whatever the
	// case ("dragon" keeps "Dragon Forge").
	Creator string
	// Tags keep packages that have, for each of them, a tag starting with
	// it, whatever the case ("fantasy" keeps "Fantasy").
	Tags []string
	// WholeNames makes Creator and Tags match whole names (still whatever
	// the case): a creator's or a tag's own page.
	WholeNames  bool
	ChannelID   int64
	ArchiveType hoard.ArchiveType
	Grouped     *bool // true: only grouped packages; false: only ungrouped
	HasPreview  *bool
	// GroupRows collapses the packages of a group into one row carrying the
	// group and its member count.
	GroupRows bool
	// Sort orders the results ("" is SortRelevance); another value is
	// EINVALID.
	Sort  SearchSort
	After *SearchCursor
	Limit int // default 24, at most 200

	// Extensions keeps packages whose file name ends with one of them,
	// case-insensitively (".stl"): the formats of a document kind.
	Extensions []string

	// NoEstimate is for a caller that shows no total (the bot): a Count
	// that is not exact is left at the rows found instead of asking the
	// planner for an estimate, a statement saved.
	NoEstimate bool
}

// SearchCursor is a keyset position in a result list.
type SearchCursor struct {
	Mode SearchMode `json:"m"`
	Sort SearchSort `json:"o,omitempty"`
	Rank float32    `json:"r,omitempty"`
	Time int64      `json:"t,omitempty"` // created_at in µs since the epoch
	Name string     `json:"n,omitempty"` // lower-cased file name (SortName)
	Size int64      `json:"s,omitempty"` // file size (SortSize)
	ID   int64      `json:"i"`           // package id, or group row key
}

// SearchHit is one result row: a package, or with GroupRows a group
// (Group set) represented by its best-matching package.
type SearchHit struct {
	Package hoard.Package
	Rank    float32
	// Group is set when the row stands for a whole group.
	Group *SearchGroup
	// FilesMatched counts the package's files whose paths hold the text
	// (at most MaxFilesCounted), and MatchedPaths are the first
	// matchedPathsShown of them in listing order: set for text of 3 or more
	// characters.
	FilesMatched int
	MatchedPaths []string
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
	Sort SearchSort
	Hits []SearchHit
	Next *SearchCursor
	// Capped reports that more packages matched than the ranked candidate
	// set holds: the ranking covers the newest rankCandidates matches; sort
	// by newest to browse them all.
	Capped bool
	// Count is how many packages (rows, with GroupRows) match: exact when
	// CountExact, else PostgreSQL's estimate, or the word matches of a page
	// they fill, which leaves the paths to the page that reaches them.
	Count      int64
	CountExact bool

	wordsCapped bool // more packages matched the words than the candidates hold
}

// Bounds of a search.
const (
	// rankCandidates bounds the set that ts_rank orders: the most recent
	// matches of a common word, all matches of a rarer one. Ranking every
	// one of 100,000 matches costs 100+ ms; 200 keep every query shape
	// within a few milliseconds at 1,000,000 packages (make bench) and fill
	// eight pages. File-path matches add up to as many again.
	rankCandidates = 200
	// MaxFilesCounted bounds the matching files counted per hit (an
	// archive may list 100,000 entries).
	MaxFilesCounted = 1000
	// matchedPathsShown is how many matching paths a hit carries.
	matchedPathsShown = 3
	// maxResolvedNames bounds the creators or tags a filter's prefix is
	// resolved to; a prefix matching more is matched row by row.
	maxResolvedNames = 64
)

// SearchPackages runs a catalog search: the one search of the web catalog,
// GET /api/packages and the bot. Text of 3 or more characters matches
// names, creators, tags and captions with full-text search (every word as a
// prefix; name > creator, tags > caption) and the paths of the files inside
// archives (ranked below; looked up by the page that reaches them in
// relevance order), ordered by rank, name or size among the newest
// matches, or every match newest first; when that finds nothing on the first
// page, a case-insensitive substring match over file names follows. Text of
// 1–2 characters matches names holding it inside a word. No text lists the
// catalog. Every shape is served by an index; the plan between walking the
// order's index and the match's index is chosen on PostgreSQL's estimate of
// the matches, not left to flip. A bad Sort or a cursor of another order is
// EINVALID.
func (db *DB) SearchPackages(ctx context.Context, q SearchQuery) (*SearchResult, error) {
	if q.Limit <= 0 {
		q.Limit = 24
	}
	if q.Limit > 200 {
		q.Limit = 200
	}
	if q.Sort == "" {
		q.Sort = SortRelevance
	}
	if !validSort(q.Sort) {
		return nil, hoard.Errorf(hoard.EINVALID, "sort must be one of relevance, newest, name, size.")
	}
	s := &searchPlan{q: q, words: SearchWords(q.Text), text: strings.TrimSpace(q.Text)}
	switch {
	case len(s.words) == 0:
		s.mode = SearchRecent
	case len([]rune(strings.Join(s.words, ""))) < 3:
		s.mode = SearchShort
	case q.Sort == SortNewest:
		s.mode = SearchFullTextNewest
	default:
		s.mode = SearchFullText
	}
	if q.After != nil {
		if q.After.Sort != "" && q.After.Sort != q.Sort {
			return nil, hoard.Errorf(hoard.EINVALID, "The page cursor belongs to another sort order.")
		}
		if q.After.Mode != "" {
			s.mode = q.After.Mode // a page continues the mode of the first page
		}
	}
	if ok, err := db.resolveFilters(ctx, s); err != nil || !ok {
		return &SearchResult{Mode: s.mode, Sort: q.Sort, CountExact: true}, err
	}
	res, err := db.searchMode(ctx, s)
	if err != nil {
		return nil, err
	}
	if (s.mode == SearchFullText || s.mode == SearchFullTextNewest) && len(res.Hits) == 0 && q.After == nil && len([]rune(s.text)) >= 3 {
		s.mode = SearchSubstring
		return db.searchMode(ctx, s)
	}
	return res, nil
}

func validSort(s SearchSort) bool {
	for _, v := range SearchSorts {
		if s == v {
			return true
		}
	}
	return false
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
// letters and digits (SearchWords guarantees it): all words must match,
// each as a prefix ("drag forge" finds "Dragon Forge").
func tsQuery(words []string) string {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = w + ":*"
	}
	return strings.Join(parts, " & ")
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
	rows, err := db.q.Query(ctx, searchSQL("package_files", nil), pgx.QueryExecModeExec,
		pgx.NamedArgs{"pattern": "%" + escapeLike(text) + "%", "before_id": beforeID, "limit": limit + 1})
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
