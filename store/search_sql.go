package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hoard/hoard"
	"github.com/jackc/pgx/v5"
)

// searchPlan is one search on its way to SQL: the query, its mode and what
// its filters resolved to.
type searchPlan struct {
	q     SearchQuery
	mode  SearchMode
	words []string
	text  string // the trimmed text, matched against file paths

	// creators and tags hold what the filters' prefixes resolved to
	// (lower-cased creators; tags as stored, one list per SearchQuery.Tags
	// entry); a nil list means the prefix matched too many names to list,
	// so it is matched row by row.
	creators []string
	tags     [][]string
}

// sqlArgs collects the parameters of one statement.
type sqlArgs []any

// add binds v and returns its placeholder.
func (a *sqlArgs) add(v any) string {
	*a = append(*a, v)
	return fmt.Sprintf("$%d", len(*a))
}

// resolveFilters resolves the creator and tag prefixes against the
// catalog's lists of them (catalog_creators, catalog_tags); false when a
// prefix matches no name, so that nothing can match.
func (db *DB) resolveFilters(ctx context.Context, s *searchPlan) (bool, error) {
	whole := s.q.WholeNames
	if c := strings.TrimSpace(s.q.Creator); c != "" {
		names, err := db.namesWithPrefix(ctx, "lower(creator)", "catalog_creators", "lower(creator)", c, whole)
		if err != nil || (names != nil && len(names) == 0) {
			return false, err
		}
		s.creators = names
	}
	for _, t := range s.q.Tags {
		names, err := db.namesWithPrefix(ctx, "tag", "catalog_tags", "lower(tag)", strings.TrimSpace(t), whole)
		if err != nil || (names != nil && len(names) == 0) {
			return false, err
		}
		s.tags = append(s.tags, names)
	}
	return true, nil
}

// namesWithPrefix lists the distinct values of column in table whose
// lowered form (an expression of its text_pattern_ops index) starts with
// the lower-cased prefix (with whole, equals it): an empty list when there
// are none, nil when there are more than maxResolvedNames.
func (db *DB) namesWithPrefix(ctx context.Context, column, table, lowered, prefix string, whole bool) ([]string, error) {
	pattern := escapeLike(prefix)
	if !whole {
		pattern += "%"
	}
	rows, err := db.q.Query(ctx, `SELECT DISTINCT `+column+` FROM `+table+` WHERE `+lowered+` LIKE lower($1) LIMIT $2`,
		pgx.QueryExecModeExec, pattern, maxResolvedNames+1)
	if err != nil {
		return nil, wrap("search packages: resolve filter", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, wrap("search packages: resolve filter", err)
	}
	if len(names) > maxResolvedNames {
		return nil, nil
	}
	if names == nil {
		names = []string{}
	}
	return names, nil
}

// likePattern is the LIKE pattern of a creator or tag filter.
func (s *searchPlan) likePattern(name string) string {
	if s.q.WholeNames {
		return escapeLike(strings.TrimSpace(name))
	}
	return escapeLike(strings.TrimSpace(name)) + "%"
}

// filters are the conditions of the query's filters on packages aliased p.
func (s *searchPlan) filters(a *sqlArgs) []string {
	q := s.q
	var out []string
	switch {
	case len(s.creators) == 1:
		// Equality, not = ANY: only then does PostgreSQL read the creator
		// index (lower(creator), created_at, id) in time order.
		out = append(out, "lower(p.creator) = "+a.add(s.creators[0]))
	case s.creators != nil:
		out = append(out, "lower(p.creator) = ANY("+a.add(s.creators)+"::text[])")
	case strings.TrimSpace(q.Creator) != "":
		out = append(out, "lower(p.creator) LIKE lower("+a.add(s.likePattern(q.Creator))+")")
	}
	for i, tags := range s.tags {
		if tags != nil {
			out = append(out, "p.tags && "+a.add(tags)+"::text[]")
		} else {
			out = append(out, "EXISTS (SELECT 1 FROM unnest(p.tags) t WHERE lower(t) LIKE lower("+a.add(s.likePattern(q.Tags[i]))+"))")
		}
	}
	if q.ChannelID != 0 {
		out = append(out, "p.source_channel_id = "+a.add(q.ChannelID))
	}
	if q.ArchiveType != "" {
		out = append(out, "p.archive_type = "+a.add(string(q.ArchiveType)))
	}
	if len(q.Extensions) > 0 {
		out = append(out, extensionFilter("p", a.add, q.Extensions))
	}
	if q.Grouped != nil {
		if *q.Grouped {
			out = append(out, "p.package_group_id IS NOT NULL")
		} else {
			out = append(out, "p.package_group_id IS NULL")
		}
	}
	if q.HasPreview != nil {
		out = append(out, "p.has_preview = "+a.add(*q.HasPreview))
	}
	return out
}

// match is the text condition of the mode on packages aliased p: the form
// the match's index serves, or with walked the form cheapest to test on
// rows read in another index's order (the same rows either way).
func (s *searchPlan) match(a *sqlArgs, walked bool) string {
	switch s.mode {
	case SearchFullText, SearchFullTextNewest:
		return "p.search_vector @@ to_tsquery('english', " + a.add(tsQuery(s.words)) + ")"
	case SearchShort:
		if !walked {
			return "hoard_name_grams(p.file_name) @> " + a.add(s.words) + "::text[]"
		}
		likes := make([]string, len(s.words))
		for i, w := range s.words {
			likes[i] = "%" + escapeLike(w) + "%"
		}
		return "lower(p.file_name) LIKE ALL(" + a.add(likes) + "::text[])"
	case SearchSubstring:
		return "p.file_name ILIKE " + a.add("%"+escapeLike(s.text)+"%")
	}
	return ""
}

// order is the ORDER BY of the sort on packages aliased p, and the keyset
// condition of a page after cursor c ("" without one). Relevance orders by
// time here; the ranked candidates have their own (candidateOrder).
func (s *searchPlan) order(a *sqlArgs, c *SearchCursor) (order, after string) {
	switch s.q.Sort {
	case SortName:
		return keyset(a, c, "lower(p.file_name)", "text", "p.id", false, func(c *SearchCursor) any { return c.Name })
	case SortSize:
		return keyset(a, c, "p.file_size", "bigint", "p.id", true, func(c *SearchCursor) any { return c.Size })
	}
	return keyset(a, c, "p.created_at", "timestamptz", "p.id", true, func(c *SearchCursor) any { return time.UnixMicro(c.Time) })
}

// keyset is the ORDER BY of key (an SQL expression of type keyType) then
// tie, descending with desc, and the condition of the rows after cursor c
// in that order, value being c's key ("" without a cursor).
func keyset(a *sqlArgs, c *SearchCursor, key, keyType, tie string, desc bool, value func(*SearchCursor) any) (order, after string) {
	dir, cmp := "", ">"
	if desc {
		dir, cmp = " DESC", "<"
	}
	order = key + dir + ", " + tie + dir
	if c != nil {
		after = fmt.Sprintf("(%s, %s) %s (%s::%s, %s::bigint)", key, tie, cmp, a.add(value(c)), keyType, a.add(c.ID))
	}
	return order, after
}

// estimateRows asks the planner how many rows of from (packages p, or
// another table) satisfy the conditions; it plans, it does not execute.
func (db *DB) estimateRows(ctx context.Context, from string, conds []string, args sqlArgs) (float64, error) {
	var plan []byte
	err := db.q.QueryRow(ctx, `EXPLAIN (FORMAT JSON) SELECT 1 FROM `+from+` WHERE `+where(conds),
		append([]any{pgx.QueryExecModeExec}, args...)...).Scan(&plan)
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

// walkFactor weighs reading one row in the order's index and testing it
// against collecting one match from the match's index (a random heap page
// each) and sorting it. Measured at 1,000,000 packages: the newest 200
// matches of words of 2,700, 3,500 and 4,500 matches cost the same both
// ways at about 4,000 (walking 50,000 rows, collecting 4,000).
const walkFactor = 0.08

// chooseWalk estimates the matches of the mode's text (with the filters)
// and decides whether to walk the order's index, testing rows until want
// matches are found, rather than collect every match from the text's index
// and sort them: walking reads about want × filtered ÷ matches rows,
// collecting reads the matches. Deciding here, on the planner's own
// estimates, keeps a query from flipping between the two plans on
// neighbouring estimates, where PostgreSQL's cost model misjudges the
// walk. It returns the estimate of the matches too, and whether the text
// alone matches few enough rows (fenceMatches) that collecting them should
// not be combined with a filter's index: a bitmap of a prolific creator's
// 80,000 rows costs more than testing the creator on the text's few
// thousand. Words with resolved creators are never fenced: one index
// (packages_creator_search_idx) serves both.
func (db *DB) chooseWalk(ctx context.Context, s *searchPlan, want int) (walk bool, matches float64, fence bool, err error) {
	var a sqlArgs
	filters := s.filters(&a)
	if matches, err = db.estimateRows(ctx, "packages p", append(filters, s.match(&a, false)), a); err != nil {
		return false, 0, false, err
	}
	var b sqlArgs
	base, err := db.estimateRows(ctx, "packages p", s.filters(&b), b)
	if err != nil {
		return false, 0, false, err
	}
	walk = matches*matches > walkFactor*float64(want)*base
	if !walk && len(filters) > 0 && !s.creatorWithWords() {
		var c sqlArgs
		text, err := db.estimateRows(ctx, "packages p", []string{s.match(&c, false)}, c)
		if err != nil {
			return false, 0, false, err
		}
		fence = text <= fenceMatches
	}
	return walk, matches, fence, nil
}

// creatorWithWords reports whether the search matches words with the
// creator filter resolved to names: conditions that the index on both
// serves together.
func (s *searchPlan) creatorWithWords() bool {
	return s.creators != nil && (s.mode == SearchFullText || s.mode == SearchFullTextNewest)
}

// fenceMatches is the most matches of a text alone that a filtered search
// collects from the text's index only, testing the filters on each.
const fenceMatches = 20000

// collectSQL is the FROM item of a filtered search's matches collected
// from the text's index: with fence, the text's matches tested against
// the filters one by one (the OFFSET 0 keeps the planner from combining the
// filters' indexes).
func collectSQL(filters []string, match string, fence bool) string {
	if fence {
		return "(SELECT * FROM packages p WHERE " + match + " OFFSET 0) p WHERE " + where(filters)
	}
	return "packages p WHERE " + where(append(filters, match))
}

// searchMode runs the search in s's mode.
func (db *DB) searchMode(ctx context.Context, s *searchPlan) (*SearchResult, error) {
	if s.mode == SearchFullText {
		return db.searchCandidates(ctx, s)
	}
	return db.searchAll(ctx, s)
}

// where joins conditions with AND ("true" for none).
func where(conds []string) string {
	if len(conds) == 0 {
		return "true"
	}
	return strings.Join(conds, " AND ")
}

// searchAll pages through every match in the sort's order (relevance is
// newest first here). The full-text and short modes walk the order's index
// or collect their matches from the text's index as chooseWalk decides; no
// text walks the order's index, and the substring fallback is planned by
// PostgreSQL (its trigram estimates are sound). With group rows a group is
// represented by its newest matching member, so that it appears once
// across pages.
func (db *DB) searchAll(ctx context.Context, s *searchPlan) (*SearchResult, error) {
	decided := s.mode == SearchFullTextNewest || s.mode == SearchShort
	walk, fence, est := false, false, -1.0
	if decided {
		var err error
		if walk, est, fence, err = db.chooseWalk(ctx, s, s.q.Limit+1); err != nil {
			return nil, err
		}
	}
	var a sqlArgs
	filters := s.filters(&a)
	m := s.match(&a, walk)
	order, after := s.order(&a, s.q.After)
	inner := filters
	if after != "" {
		inner = append(inner, after)
	}
	var outer []string // conditions on the rows read, besides inner
	rowKey := "p.id"
	if s.q.GroupRows {
		rowKey = "coalesce(-p.package_group_id, p.id)"
		newer := append([]string{"n.package_group_id = p.package_group_id", "(n.created_at, n.id) > (p.created_at, p.id)"}, filters...)
		if m != "" {
			newer = append(newer, m)
		}
		for i := 2; i < len(newer); i++ { // the same filters and text match, on n
			newer[i] = strings.ReplaceAll(newer[i], "p.", "n.")
		}
		outer = append(outer, "(p.package_group_id IS NULL OR NOT EXISTS (SELECT 1 FROM packages n WHERE "+where(newer)+"))")
	}
	with, from := "", "packages p"
	switch {
	case decided && walk:
		from = "(SELECT * FROM packages p WHERE " + where(inner) + " ORDER BY " + order + " OFFSET 0) p"
		outer = append([]string{m}, outer...)
	case decided:
		with = "WITH m AS MATERIALIZED (SELECT p.id FROM " + collectSQL(inner, m, fence) + ") "
		from = "m JOIN packages p ON p.id = m.id"
	default:
		if m != "" {
			inner = append(inner, m)
		}
		outer = append(inner, outer...)
	}
	sql := with + `SELECT ` + rowKey + ` AS row_key, 0::real AS rank, false AS capped, 0::bigint AS total_rows,
		lower(p.file_name) AS sort_name, ` + prefixedPackageColumns + `, ` + groupRowColumns + `
		FROM ` + from + ` LEFT JOIN package_groups g ON g.id = p.package_group_id AND ` + fmt.Sprint(s.q.GroupRows) + `
		WHERE ` + where(outer) + `
		ORDER BY ` + order + ` LIMIT ` + a.add(s.q.Limit+1)
	res, err := db.runSearch(ctx, s, sql, a, false)
	if err != nil {
		return nil, err
	}
	if s.q.After == nil && res.Next == nil {
		res.Count, res.CountExact = int64(len(res.Hits)), true
		return res, nil
	}
	if est < 0 && !s.q.NoEstimate {
		var b sqlArgs
		conds := s.filters(&b)
		if m := s.match(&b, false); m != "" {
			conds = append(conds, m)
		}
		if est, err = db.estimateRows(ctx, "packages p", conds, b); err != nil {
			return nil, err
		}
	}
	res.Count = max(int64(est), int64(len(res.Hits)))
	return res, nil
}

// searchCandidates serves SearchFullText: the newest rankCandidates
// packages whose words match and the newest rankCandidates whose archives
// hold a path containing the text form the candidates, ordered by rank
// (matches of the path only rank 0, below every word match), name or size;
// group rows keep each group's best-ranked member. The word matches and
// their ranks come from package_words for one word without filters
// (wordPostings), else from the full-text index.
func (db *DB) searchCandidates(ctx context.Context, s *searchPlan) (*SearchResult, error) {
	words, err := db.wordPostings(ctx, s)
	if err != nil {
		return nil, err
	}
	var a sqlArgs
	filters := s.filters(&a)
	with, text, candidates, est := "WITH ", "", "", -1.0
	lookPaths := len([]rune(s.text)) >= 3 && !strings.Contains(s.text, "\n")
	if words != nil {
		text = "SELECT unnest(" + a.add(words.ids) + "::bigint[]) AS id"
		lookPaths = lookPaths && len(words.ids) < rankCandidates
		candidates = words.candidates(&a, s.q, lookPaths)
	} else {
		tsq := "to_tsquery('english', " + a.add(tsQuery(s.words)) + ")"
		match := "p.search_vector @@ " + tsq
		if with, text, est, err = db.newestByIndex(ctx, s, filters, match); err != nil {
			return nil, err
		}
		candidates = `SELECT p.id, p.created_at, p.package_group_id, lower(p.file_name) AS sort_name, p.file_size,
				(CASE WHEN ` + match + ` THEN ts_rank(p.search_vector, ` + tsq + `) ELSE 0 END)::real AS rank
			FROM packages p WHERE p.id IN (SELECT id FROM t UNION SELECT id FROM f)`
	}
	files := "SELECT NULL::bigint AS id WHERE false"
	if lookPaths {
		// Only while the words' matches do not fill the candidates: paths
		// rank below every word match, so with rankCandidates of those
		// they would never be reached, and a common fragment costs the
		// most to look up. The filters apply to the newest packages whose
		// paths match, not during their lookup: testing them on every
		// matching entry read walked the whole file index for a rare
		// creator. package_paths holds each package's paths joined by
		// newlines: a text with a newline of its own (which no search box
		// sends) would match across two of them, so it is not looked up.
		files = "SELECT DISTINCT pp.package_id AS id FROM package_paths pp WHERE (SELECT count(*) FROM t) < " + fmt.Sprint(rankCandidates) +
			" AND " + where(lowerPathsMatch("pp.paths", &a, s.text)) +
			" ORDER BY pp.package_id DESC LIMIT " + fmt.Sprint(rankCandidates)
		if len(filters) > 0 {
			files = "SELECT p.id FROM (" + files + ") fp JOIN packages p ON p.id = fp.id WHERE " + where(filters)
		}
	}
	rows := `SELECT c.id AS row_key, c.* FROM candidates c`
	if s.q.GroupRows {
		key := "coalesce(-c.package_group_id, c.id)" // group rows get negative keys
		rows = `SELECT DISTINCT ON (` + key + `) ` + key + ` AS row_key, c.*
			FROM candidates c ORDER BY ` + key + `, c.rank DESC, c.created_at DESC, c.id DESC`
	}
	order, after := candidateOrder(s.q.Sort, &a, s.q.After)
	// The page is cut from the narrow candidate rows before the wide
	// package rows are joined: sorting 200 joined rows to keep 25 cost more
	// than finding them.
	sql := with + `t AS MATERIALIZED (` + text + `), f AS MATERIALIZED (` + files + `),
		candidates AS MATERIALIZED (` + candidates + `),
		r AS (` + rows + `)
		SELECT r.row_key, r.rank, lower(p.file_name) AS sort_name,
			(SELECT count(*) FROM t) >= ` + fmt.Sprint(rankCandidates) + ` OR (SELECT count(*) FROM f) >= ` + fmt.Sprint(rankCandidates) + ` AS capped,
			(SELECT count(*) FROM r) AS total_rows, ` + prefixedPackageColumns + `, ` + groupRowColumns + `
		FROM (SELECT * FROM r WHERE ` + where(nonEmpty(after)) + ` ORDER BY ` + order + ` LIMIT ` + a.add(s.q.Limit+1) + `) r
		JOIN packages p ON p.id = r.id
		LEFT JOIN package_groups g ON g.id = p.package_group_id AND r.row_key < 0
		ORDER BY ` + order
	// A search served by package_words without a path lookup is one
	// statement for every word (its candidates are parameters): prepared,
	// it is planned once, not on every search.
	res, err := db.runSearch(ctx, s, sql, a, words != nil && !lookPaths)
	if err != nil {
		return nil, err
	}
	res.CountExact = !res.Capped
	if res.Capped {
		if est < 0 && !s.q.NoEstimate { // the entries of the lexemes: one per package that holds one
			var b sqlArgs
			if est, err = db.estimateRows(ctx, "package_words", []string{"word = ANY(" + b.add(words.lexemes) + "::text[])"}, b); err != nil {
				return nil, err
			}
		}
		res.Count = max(res.Count, int64(est))
	}
	return res, nil
}

// newestByIndex is the start of a ranked search's statement whose word
// matches come from the full-text index (walking the newest packages or
// collecting the matches, as chooseWalk decides): the WITH clause, the
// SELECT of the newest rankCandidates matches' ids and the estimate of
// the matches.
func (db *DB) newestByIndex(ctx context.Context, s *searchPlan, filters []string, match string) (with, text string, est float64, err error) {
	walk, est, fence, err := db.chooseWalk(ctx, s, rankCandidates)
	if err != nil {
		return "", "", 0, err
	}
	with = "WITH "
	newest := " ORDER BY p.created_at DESC, p.id DESC"
	text = "SELECT p.id FROM (SELECT * FROM packages p WHERE " + where(filters) + newest + " OFFSET 0) p WHERE " + match + newest
	if !walk {
		with += "tm AS MATERIALIZED (SELECT p.id, p.created_at FROM " + collectSQL(filters, match, fence) + "), "
		text = "SELECT p.id FROM tm p" + newest
	}
	return with, text + " LIMIT " + fmt.Sprint(rankCandidates), est, nil
}

// nonEmpty is the list of the non-empty conditions.
func nonEmpty(conds ...string) []string {
	var out []string
	for _, c := range conds {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// candidateOrder is the ORDER BY of the ranked candidates' rows (alias r)
// in a sort, and the keyset condition of a page after cursor c.
func candidateOrder(sort SearchSort, a *sqlArgs, c *SearchCursor) (order, after string) {
	switch sort {
	case SortName:
		return keyset(a, c, "r.sort_name", "text", "r.row_key", false, func(c *SearchCursor) any { return c.Name })
	case SortSize:
		return keyset(a, c, "r.file_size", "bigint", "r.row_key", true, func(c *SearchCursor) any { return c.Size })
	}
	return keyset(a, c, "r.rank", "real", "r.row_key", true, func(c *SearchCursor) any { return c.Rank })
}

// pathMatch is the condition that column, a file path, contains text
// (case-insensitive): a long text is looked up by its first
// indexedQueryRunes characters (the trigram index's work grows with the
// pattern) and matched whole on what they find.
func pathMatch(column string, a *sqlArgs, text string) []string {
	return textMatch(column+" ILIKE %s", "lower("+column+")", a, text)
}

// lowerPathsMatch is pathMatch on column, package_paths.paths, whose
// text is lower-cased already: LIKE with the lower-cased pattern compares
// bytes, where ILIKE would lower-case every chunk it tests.
func lowerPathsMatch(column string, a *sqlArgs, text string) []string {
	return textMatch(column+" LIKE lower(%s)", column, a, text)
}

// textMatch is pathMatch with the pattern condition like (a format taking
// the pattern's placeholder) and lowered, the column lower-cased, for the
// whole text's test.
func textMatch(like, lowered string, a *sqlArgs, text string) []string {
	head := text
	if r := []rune(text); len(r) > indexedQueryRunes {
		head = string(r[:indexedQueryRunes])
	}
	conds := []string{fmt.Sprintf(like, a.add("%"+escapeLike(head)+"%"))}
	if head != text {
		conds = append(conds, "strpos("+lowered+", lower("+a.add(text)+")) > 0")
	}
	return conds
}

// groupRowColumns names the group of a collapsed row and counts its members.
const groupRowColumns = `coalesce(g.name, '') AS group_name,
	CASE WHEN g.id IS NULL THEN 0 ELSE (SELECT count(*) FROM packages m WHERE m.package_group_id = g.id) END AS group_members`

// runSearch runs a search query and cuts the page. Search queries run with
// QueryExecModeExec so that PostgreSQL plans each with its real parameters:
// a cached generic plan can pick an index scan that returns every row for a
// short pattern (the generic-plan trap). With prepared, the query's plan
// does not depend on its parameters, and it runs as a prepared statement.
func (db *DB) runSearch(ctx context.Context, s *searchPlan, sql string, args sqlArgs, prepared bool) (*SearchResult, error) {
	if !prepared {
		args = append(sqlArgs{pgx.QueryExecModeExec}, args...)
	}
	pgRows, err := db.q.Query(ctx, sql, args...)
	if err != nil {
		return nil, wrap("search packages", err)
	}
	type row struct {
		RowKey       int64
		Rank         float32
		Capped       bool
		TotalRows    int64
		SortName     string
		GroupName    string
		GroupMembers int
		hoard.Package
	}
	got, err := pgx.CollectRows(pgRows, pgx.RowToStructByNameLax[row])
	if err != nil {
		return nil, wrap("search packages", err)
	}
	res := &SearchResult{Mode: s.mode, Sort: s.q.Sort}
	for i, r := range got {
		res.Capped = res.Capped || r.Capped
		res.Count = r.TotalRows
		if i == s.q.Limit {
			last := got[i-1]
			res.Next = &SearchCursor{Mode: s.mode, Sort: s.q.Sort, Rank: last.Rank, Time: last.CreatedAt.UnixMicro(),
				Name: last.SortName, Size: last.FileSize, ID: last.RowKey}
			if s.mode != SearchFullText {
				res.Next.ID = last.ID // pages of every match continue after a package
			}
			break
		}
		hit := SearchHit{Package: r.Package, Rank: r.Rank}
		if r.RowKey < 0 {
			hit.Group = &SearchGroup{ID: -r.RowKey, Name: r.GroupName, MemberCount: r.GroupMembers}
		}
		res.Hits = append(res.Hits, hit)
	}
	if len([]rune(s.text)) >= 3 && len(res.Hits) > 0 {
		if err := db.matchFiles(ctx, res.Hits, s.text); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// matchFiles sets the hits' FilesMatched and MatchedPaths: their files
// whose paths contain text, in listing order. Only hits with a file
// listing (FileCount, kept by ReplacePackageFiles) are looked up: a page
// without one costs no statement.
func (db *DB) matchFiles(ctx context.Context, hits []SearchHit, text string) error {
	var ids []int64
	for _, h := range hits {
		if h.Package.FileCount > 0 {
			ids = append(ids, h.Package.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var a sqlArgs
	idsArg := a.add(ids)
	conds := append([]string{"f.package_id = i.id"}, pathMatch("f.path", &a, text)...)
	rows, err := db.q.Query(ctx, `SELECT i.id, count(*), (array_agg(x.path ORDER BY x.ordinal))[1:`+fmt.Sprint(matchedPathsShown)+`]
		FROM unnest(`+idsArg+`::bigint[]) AS i(id)
		CROSS JOIN LATERAL (SELECT f.path, f.ordinal FROM package_files f WHERE `+where(conds)+`
			ORDER BY f.ordinal LIMIT `+fmt.Sprint(MaxFilesCounted)+`) x
		GROUP BY i.id`, append([]any{pgx.QueryExecModeExec}, a...)...)
	if err != nil {
		return wrap("search packages: match files", err)
	}
	found := map[int64]int{}
	paths := map[int64][]string{}
	var id int64
	var n int
	var ps []string
	_, err = pgx.ForEachRow(rows, []any{&id, &n, &ps}, func() error {
		found[id], paths[id] = n, ps
		return nil
	})
	if err != nil {
		return wrap("search packages: match files", err)
	}
	for i := range hits {
		hits[i].FilesMatched, hits[i].MatchedPaths = found[hits[i].Package.ID], paths[hits[i].Package.ID]
	}
	return nil
}

// ListFilterNames returns the creators and the tags the catalog has held,
// at most limit of each (1–1000, else 200), A to Z whatever the case: the
// catalog filter bar's suggestions. Both lists are served by indexes.
func (db *DB) ListFilterNames(ctx context.Context, limit int) (creators, tags []string, err error) {
	if limit <= 0 || limit > 1000 {
		limit = 200
	}
	for _, l := range []struct {
		dst *[]string
		sql string
	}{
		{&creators, `SELECT creator FROM catalog_creators ORDER BY lower(creator), creator LIMIT $1`},
		{&tags, `SELECT tag FROM catalog_tags ORDER BY lower(tag), tag LIMIT $1`},
	} {
		rows, err := db.q.Query(ctx, l.sql, limit)
		if err != nil {
			return nil, nil, wrap("list filter names", err)
		}
		if *l.dst, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return nil, nil, wrap("list filter names", err)
		}
	}
	return creators, tags, nil
}
