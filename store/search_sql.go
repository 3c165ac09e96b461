package store

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/hoard/hoard"
	"github.com/jackc/pgx/v5"
)

// The search's SQL is whole statements, one per search shape, named and
// written in search.sql; the code below only chooses a shape's name and
// binds its arguments. testdata/search/ holds the exact text of every
// shape (TestSearchStatements), so that a change to one shows as a diff.

//go:embed search.sql
var searchTemplates string

// searchOrder is an order of a shape's rows: key (a column of the alias
// given as %[1]s, of SQL type keyType) then tie, descending with desc.
type searchOrder struct {
	name, key, keyType, tie string
	desc                    bool
	// value is a cursor's key in this order.
	value func(*SearchCursor) any
}

// Orders of the lists of every match (a package per row, p.id its key)
// and of the ranked candidates (r.row_key, negative for a group row).
var (
	listNewest = searchOrder{"newest", "%s.created_at", "timestamptz", "%s.id", true, func(c *SearchCursor) any { return time.UnixMicro(c.Time) }}
	listName   = searchOrder{"name", "lower(%s.file_name)", "text", "%s.id", false, func(c *SearchCursor) any { return c.Name }}
	listSize   = searchOrder{"size", "%s.file_size", "bigint", "%s.id", true, func(c *SearchCursor) any { return c.Size }}
	rankedRank = searchOrder{"rank", "%s.rank", "real", "%s.row_key", true, func(c *SearchCursor) any { return c.Rank }}
	rankedName = searchOrder{"name", "%s.sort_name", "text", "%s.row_key", false, func(c *SearchCursor) any { return c.Name }}
	rankedSize = searchOrder{"size", "%s.file_size", "bigint", "%s.row_key", true, func(c *SearchCursor) any { return c.Size }}
)

// shapeData is what a shape's template is instantiated with: its order,
// and for the shapes that look paths up, whether they look them up for
// one creator (the "paths" fragment of search.sql), a statement of its
// own so that the others neither parse nor plan that lookup.
type shapeData struct {
	searchOrder
	CreatorPaths bool
}

// creatorPathsSuffix ends the names of the statements instantiated with
// CreatorPaths.
const creatorPathsSuffix = "_creator_paths"

// By is the ORDER BY list of the order on the rows aliased alias.
func (o searchOrder) By(alias string) string {
	dir := ""
	if o.desc {
		dir = " DESC"
	}
	return fmt.Sprintf(o.key, alias) + dir + ", " + fmt.Sprintf(o.tie, alias) + dir
}

// After is the condition of the rows after the cursor (@after_key,
// @after_id) in the order, true without one.
func (o searchOrder) After(alias string) string {
	cmp := ">"
	if o.desc {
		cmp = "<"
	}
	return fmt.Sprintf("(@after_id::bigint IS NULL OR (%s, %s) %s (@after_key::%s, @after_id::bigint))",
		fmt.Sprintf(o.key, alias), fmt.Sprintf(o.tie, alias), cmp, o.keyType)
}

// listOrder is the order of the lists of every match in sort (relevance:
// newest first).
func listOrder(sort SearchSort) searchOrder {
	switch sort {
	case SortName:
		return listName
	case SortSize:
		return listSize
	}
	return listNewest
}

// rankedOrder is the order of the ranked candidates in sort.
func rankedOrder(sort SearchSort) searchOrder {
	switch sort {
	case SortName:
		return rankedName
	case SortSize:
		return rankedSize
	}
	return rankedRank
}

// searchShapes are the templates of search.sql that are statements, each
// with the orders it is instantiated in: the shape's name is the
// template's, with the order's name after an underscore.
var searchShapes = []struct {
	template string
	orders   []searchOrder
	paths    bool // also instantiated with CreatorPaths, as name_creator_paths
}{
	{"list", []searchOrder{listNewest, listName, listSize}, false},
	{"list_walk", []searchOrder{listNewest, listName, listSize}, false},
	{"list_collect", []searchOrder{listNewest, listName, listSize}, false},
	{"list_collect_fenced", []searchOrder{listNewest, listName, listSize}, false},
	{"list_token_lists", []searchOrder{listNewest}, false},
	{"ranked_walk", []searchOrder{rankedRank, rankedName, rankedSize}, true},
	{"ranked_collect", []searchOrder{rankedRank, rankedName, rankedSize}, true},
	{"ranked_collect_fenced", []searchOrder{rankedRank, rankedName, rankedSize}, true},
	{"words_unjoined", []searchOrder{rankedRank}, false},
	{"words", []searchOrder{rankedRank, rankedName, rankedSize}, false},
	{"words_paths", []searchOrder{rankedRank, rankedName, rankedSize}, true},
	{"words_list", []searchOrder{listNewest}, false},
	{"word_postings", nil, false},
	{"word_lexemes", nil, false},
	{"creator_word_postings", nil, false},
	{"pair_postings", nil, false},
	{"creator_pair_postings", nil, false},
	{"lead_postings", nil, false},
	{"creator_lead_postings", nil, false},
	{"estimate_creator_word_entries", nil, false},
	{"estimate_packages", nil, false},
	{"estimate_paths", nil, false},
	{"estimate_word_entries", nil, false},
	{"path_tokens", nil, false},
	{"name_tokens", nil, false},
	{"name_sample", nil, false},
	{"group_row_keys", nil, false},
	{"resolve_creators", nil, false},
	{"resolve_tags", nil, false},
	{"match_files", nil, false},
	{"package_files", nil, false},
}

// searchStatements maps every shape's name to its whole statement (the text
// of its golden file) with its optional conditions located.
var searchStatements = buildSearchStatements()

// buildSearchStatements instantiates searchShapes; it panics on a template
// error, which a test run finds.
func buildSearchStatements() map[string]searchStatement {
	t := template.Must(template.New("search.sql").Funcs(template.FuncMap{
		"packageColumns":    func(alias string) string { return qualifyColumns(alias+".", packageColumns) },
		"groupColumns":      func() string { return groupRowColumns },
		"rankCandidates":    func() int { return rankCandidates },
		"pathsBatches":      func() int { return pathsBatches },
		"pathsSparse":       func() int { return pathsSparse },
		"matchedPathsShown": func() int { return matchedPathsShown },
		"maxFilesCounted":   func() int { return MaxFilesCounted },
		"windowLexemes":     func() int { return windowLexemes },
		"side":              func(table, arg string, lexemes int) windowSide { return windowSide{table, arg, lexemes} },
	}).Parse(searchTemplates))
	out := map[string]searchStatement{}
	for _, s := range searchShapes {
		if s.orders == nil {
			out[s.template] = newSearchStatement(s.template, execSearchTemplate(t, s.template, nil))
		}
		for _, o := range s.orders {
			name := s.template + "_" + o.name
			out[name] = newSearchStatement(name, execSearchTemplate(t, s.template, shapeData{o, false}))
			if s.paths {
				name += creatorPathsSuffix
				out[name] = newSearchStatement(name, execSearchTemplate(t, s.template, shapeData{o, true}))
			}
		}
	}
	return out
}

// windowSide is what a word_window reads: the lists of Table (package_words
// or package_creator_words) of up to Lexemes lexemes, bound as Arg_0,
// Arg_1, ….
type windowSide struct {
	Table, Arg string
	Lexemes    int
}

func execSearchTemplate(t *template.Template, name string, data any) string {
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name, data); err != nil {
		panic(fmt.Sprintf("search statement %s: %v", name, err))
	}
	return b.String()
}

// searchSQL is the statement of the shape name to send with args: its
// whole statement with the optional conditions of the arguments args
// leaves unbound cut (searchStatement.text).
func searchSQL(name string, args pgx.NamedArgs) string {
	st, ok := searchStatements[name]
	if !ok {
		panic("no search statement " + name)
	}
	return st.text(args)
}

// searchStatementNames lists the names of the search's shapes, sorted.
func searchStatementNames() []string {
	names := make([]string, 0, len(searchStatements))
	for n := range searchStatements {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

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

	// lexemes is the words as a tsquery of the lexemes each one starts
	// (resolveLexemes), "" when they are matched as prefixes; wordLexemes
	// are those lexemes, a list a word (nil for a word matched as a
	// prefix).
	lexemes     string
	wordLexemes [][]string

	// nameTokens are the tokens of names that hold the text, for the
	// substring fallback (tokensHolding), nil when it matches by ILIKE.
	nameTokens []string
	// nameWindow is the text's window of three characters that the
	// trigram index is asked for alone (rareWindow), "" for the whole text.
	nameWindow string
	// tokenLists are the tokens of names that hold the text when the
	// page is read from their lists in package_name_tokens instead
	// (servedByTokenLists, the list_token_lists shape).
	tokenLists []string

	// matches caches the planner's estimate of the packages that match
	// the filters and the text, once asked (estimateMatches).
	matches      float64
	matchesKnown bool
}

// resolveFilters resolves the creator and tag prefixes against the
// catalog's lists of them (catalog_creators, catalog_tags); false when a
// prefix matches no name, so that nothing can match.
func (db *DB) resolveFilters(ctx context.Context, s *searchPlan) (bool, error) {
	if c := strings.TrimSpace(s.q.Creator); c != "" {
		names, err := db.namesWithPrefix(ctx, "resolve_creators", s.likePattern(c))
		if err != nil || (names != nil && len(names) == 0) {
			return false, err
		}
		s.creators = names
	}
	for _, t := range s.q.Tags {
		names, err := db.namesWithPrefix(ctx, "resolve_tags", s.likePattern(t))
		if err != nil || (names != nil && len(names) == 0) {
			return false, err
		}
		s.tags = append(s.tags, names)
	}
	return true, nil
}

// namesWithPrefix runs the shape that lists the names LIKE pattern: an
// empty list when there are none, nil when there are more than
// maxResolvedNames.
func (db *DB) namesWithPrefix(ctx context.Context, shape, pattern string) ([]string, error) {
	rows, err := db.q.Query(ctx, searchSQL(shape, nil), pgx.QueryExecModeExec,
		pgx.NamedArgs{"pattern": pattern, "limit": maxResolvedNames + 1})
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

// bindFilters binds the arguments of the query's filters (the "filters"
// fragment of search.sql) and reports whether there are any.
func (s *searchPlan) bindFilters(args pgx.NamedArgs) bool {
	q, some := s.q, false
	bind := func(name string, v any) { args[name], some = v, true }
	switch {
	case len(s.creators) == 1:
		bind("creator", s.creators[0])
	case s.creators != nil:
		bind("creators", s.creators)
	case strings.TrimSpace(q.Creator) != "":
		bind("creator_like", s.likePattern(q.Creator))
	}
	var groups []int32
	var names []string
	var likes []bool
	for i, tags := range s.tags {
		switch {
		case tags != nil && args["tags_any"] == nil:
			bind("tags_any", tags)
		case tags != nil:
			for _, t := range tags {
				groups, names, likes = append(groups, int32(i)), append(names, t), append(likes, false)
			}
		default:
			groups, names, likes = append(groups, int32(i)), append(names, s.likePattern(q.Tags[i])), append(likes, true)
		}
	}
	if groups != nil {
		bind("tag_group", groups)
		bind("tag_name", names)
		bind("tag_like", likes)
	}
	if q.ChannelID != 0 {
		bind("channel_id", q.ChannelID)
	}
	if q.ArchiveType != "" {
		bind("archive_type", string(q.ArchiveType))
	}
	if len(q.Extensions) > 0 {
		patterns := make([]string, len(q.Extensions))
		for i, e := range q.Extensions {
			patterns[i] = "%" + escapeLike(strings.ToLower(e))
		}
		bind("extensions", patterns)
	}
	if q.Grouped != nil {
		bind("grouped", *q.Grouped)
	}
	if q.HasPreview != nil {
		bind("has_preview", *q.HasPreview)
	}
	return some
}

// bindFiltersForPaths binds the query's filters and filtered: whether any
// of them is one that the path lookup ("paths" in search.sql) does not
// apply itself, any but one creator's.
func (s *searchPlan) bindFiltersForPaths(args pgx.NamedArgs) {
	s.bindFilters(args)
	args["filtered"] = s.filteredForPaths()
}

// filteredForPaths reports whether the query has a filter that the path
// lookup does not apply itself: any but one creator's.
func (s *searchPlan) filteredForPaths() bool {
	filters := pgx.NamedArgs{}
	s.bindFilters(filters)
	delete(filters, "creator")
	return len(filters) > 0
}

// hasFilters reports whether the query filters.
func (s *searchPlan) hasFilters() bool {
	return s.bindFilters(pgx.NamedArgs{})
}

// bindMatch binds the text condition of the mode (the "match" fragment):
// the form the match's index serves, or with walked the form cheapest to
// test on rows read in another index's order (the same rows either way).
func (s *searchPlan) bindMatch(args pgx.NamedArgs, walked bool) {
	switch s.mode {
	case SearchFullText, SearchFullTextNewest:
		if s.lexemes != "" {
			args["match_lexemes"] = s.lexemes
			return
		}
		args["tsquery"] = tsQuery(s.words)
	case SearchShort:
		if !walked {
			args["grams"] = s.words
			return
		}
		likes := make([]string, len(s.words))
		for i, w := range s.words {
			likes[i] = "%" + escapeLike(w) + "%"
		}
		args["likes"] = likes
	case SearchSubstring:
		if s.tokenLists != nil {
			args["token_list"], args["name_text"] = s.tokenLists, strings.ToLower(s.text)
			return
		}
		if s.nameTokens != nil {
			args["name_tokens"], args["name_text"] = s.nameTokens, strings.ToLower(s.text)
			return
		}
		if s.nameWindow != "" {
			args["substring"], args["name_text"] = "%"+s.nameWindow+"%", strings.ToLower(s.text)
			return
		}
		args["substring"] = "%" + escapeLike(s.text) + "%"
	}
}

// bindAfter binds the cursor c of a page in order o (nothing without one).
func bindAfter(args pgx.NamedArgs, o searchOrder, c *SearchCursor) {
	if c != nil {
		args["after_key"], args["after_id"] = o.value(c), c.ID
	}
}

// bindPaths binds the text of a path lookup (path_like, path_text): a long
// text is looked up by its first indexedQueryRunes characters (the trigram
// index's work grows with the pattern) and matched whole on what they find.
func bindPaths(args pgx.NamedArgs, text string) {
	head := text
	if r := []rune(text); len(r) > indexedQueryRunes {
		head = string(r[:indexedQueryRunes])
	}
	args["path_like"] = "%" + escapeLike(head) + "%"
	if head != text {
		args["path_text"] = text
	}
}

// maxTokens is the most tokens a lookup by tokens (of paths or names) asks
// the index of tokens for: a text that more tokens hold (a common
// fragment, "arm") is looked up by its trigrams.
const maxTokens = 64

// tokensHolding returns the tokens that the vocabulary of shape
// (path_tokens, name_tokens: every token of the lower-cased paths or names,
// migrations 035 and 036) lists holding text, with "" when it is listed (a
// token too long to list may hold the text); an empty list when none does,
// so that no path or name holds the text; or nil when text is not looked up
// by tokens: it has a character other than an ASCII letter or digit (it may
// span tokens), or more than most hold it. A text of ASCII letters and
// digits alone lies inside one token wherever it occurs, so a path or name
// that holds it lists one of these.
func (db *DB) tokensHolding(ctx context.Context, shape, text string, most int) ([]string, error) {
	if !asciiAlphanumeric(text) {
		return nil, nil
	}
	rows, err := db.q.Query(ctx, searchSQL(shape, nil), pgx.QueryExecModeExec,
		pgx.NamedArgs{"token_like": "%" + strings.ToLower(text) + "%", "limit": most + 1})
	if err != nil {
		return nil, wrap("search packages: "+shape, err)
	}
	tokens, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, wrap("search packages: "+shape, err)
	}
	holding := len(tokens)
	if slices.Contains(tokens, "") {
		holding--
	}
	if holding > most {
		return nil, nil
	}
	if tokens == nil { // none: not nil, which is the trigrams'
		tokens = []string{}
	}
	return tokens, nil
}

// bindPathLookup binds the text of a search's path lookup and reports
// whether a path may hold it: by the tokens of package_paths that hold it
// (path_tokens, and path_text to test on what they find) where
// tokensHolding gives them, false when it gives none, else by its trigrams
// (bindPaths).
func (db *DB) bindPathLookup(ctx context.Context, args pgx.NamedArgs, text string) (bool, error) {
	tokens, err := db.tokensHolding(ctx, "path_tokens", text, maxTokens)
	switch {
	case err != nil:
		return false, err
	case tokens == nil:
		bindPaths(args, text)
	case len(tokens) == 0:
		return false, nil
	default:
		args["path_tokens"], args["path_text"] = tokens, strings.ToLower(text)
	}
	return true, nil
}

// asciiAlphanumeric reports whether text is ASCII letters and digits alone.
func asciiAlphanumeric(text string) bool {
	for _, c := range []byte(text) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return text != ""
}

// The walk through a creator's chunks of package_paths (the "paths"
// fragment of search.sql): it tests the newest pathsProbe chunks, walks on
// only if at least one in pathsSparse of those held the text (else the
// index of creators and trigrams serves the lookup), then pathsBatch
// chunks at a time, pathsBatches batches in all. A dense text's newest
// rankCandidates are then found within the 3,200 newest chunks; a sparse
// one's would be spread over the creator's whole history. Measured at
// 1,000,000 packages: 1,000 chunks tested in 2.2 ms.
const (
	pathsProbe   = 200
	pathsBatch   = 1000
	pathsBatches = 4
	pathsSparse  = 20
)

// searchTuning holds the sizes a search reads at most that tests shrink
// to reach every way a lookup can go.
type searchTuning struct {
	pathsProbe, pathsBatch int  // a creator's chunks tested first, then at a time
	pairWindow, leadWindow int  // entries read of each of a pair's lexemes, of a lead's
	pairAlways             bool // serve every pair, whatever the planner expects
}

// defaultTuning is the search's own tuning.
var defaultTuning = searchTuning{pathsProbe: pathsProbe, pathsBatch: pathsBatch, pairWindow: pairWindow, leadWindow: leadWindow}

// tuned is the DB's tuning: defaultTuning unless a test set another.
func (db *DB) tuned() searchTuning {
	if db.tuning != nil {
		return *db.tuning
	}
	return defaultTuning
}

// bindPathsWalk binds paths_probe and paths_batch, the chunks a search's
// path lookup with one creator tests first and then at a time.
func (db *DB) bindPathsWalk(args pgx.NamedArgs) {
	t := db.tuned()
	args["paths_probe"], args["paths_batch"] = t.pathsProbe, t.pathsBatch
}

// estimateRows asks the planner how many rows the shape's statement (an
// EXPLAIN) selects with args; it plans, it does not execute.
func (db *DB) estimateRows(ctx context.Context, shape string, args pgx.NamedArgs) (float64, error) {
	var plan []byte
	if err := db.q.QueryRow(ctx, searchSQL(shape, args), pgx.QueryExecModeExec, args).Scan(&plan); err != nil {
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

// estimateMatches is the planner's estimate of the packages that match:
// with filters, the query's filters; with match, its text.
func (db *DB) estimateMatches(ctx context.Context, s *searchPlan, filters, match bool) (float64, error) {
	if filters && match && s.matchesKnown {
		return s.matches, nil
	}
	args := pgx.NamedArgs{}
	if filters {
		s.bindFilters(args)
	}
	if match {
		// A window and strpos estimate a third of the window's names, and an
		// overlap with hundreds of tokens most of the catalog: ask for the
		// text itself.
		whole := *s
		whole.nameWindow, whole.tokenLists = "", nil
		whole.bindMatch(args, false)
	}
	est, err := db.estimateRows(ctx, "estimate_packages", args)
	if err == nil && filters && match {
		s.matches, s.matchesKnown = est, true
	}
	return est, err
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
	if matches, err = db.estimateMatches(ctx, s, true, true); err != nil {
		return false, 0, false, err
	}
	base, err := db.estimateMatches(ctx, s, true, false)
	if err != nil {
		return false, 0, false, err
	}
	walk = matches*matches > walkFactor*float64(want)*base
	if !walk && s.hasFilters() && !s.creatorWithWords() {
		text, err := db.estimateMatches(ctx, s, false, true)
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

// collectShape is the name of the family that collects matches, or with
// walk walks the order's index, prefix being list or ranked.
func collectShape(prefix string, walk, fence bool) string {
	switch {
	case walk:
		return prefix + "_walk"
	case fence:
		return prefix + "_collect_fenced"
	}
	return prefix + "_collect"
}

// searchMode runs the search in s's mode.
func (db *DB) searchMode(ctx context.Context, s *searchPlan) (*SearchResult, error) {
	if s.mode == SearchFullText {
		return db.searchCandidates(ctx, s)
	}
	return db.searchAll(ctx, s)
}

// searchAll pages through every match in the sort's order (relevance is
// newest first here). One word listed newest first is read from
// package_words where it can be (searchWordNewest); else the full-text and
// short modes walk the order's index or collect their matches from the
// text's index as chooseWalk decides; no text walks the order's index,
// and the substring fallback reads its newest matches from the token lists
// of package_name_tokens where it can (resolveSubstring), else is
// planned by PostgreSQL (its trigram estimates are sound). With group rows a group is
// represented by its newest matching member, so that it appears once
// across pages.
func (db *DB) searchAll(ctx context.Context, s *searchPlan) (*SearchResult, error) {
	if res, err := db.searchWordNewest(ctx, s); err != nil || res != nil {
		return res, err
	}
	shape, walk, est := "list", false, -1.0
	if s.mode == SearchSubstring {
		none, err := db.resolveSubstring(ctx, s)
		if err != nil {
			return nil, err
		}
		if none {
			return &SearchResult{Mode: s.mode, Sort: s.q.Sort, CountExact: true}, nil
		}
		if s.tokenLists != nil {
			shape = "list_token_lists"
		}
	}
	if s.mode == SearchFullTextNewest || s.mode == SearchShort {
		var fence bool
		var err error
		if err = db.resolveLexemes(ctx, s); err != nil {
			return nil, err
		}
		if walk, est, fence, err = db.chooseWalk(ctx, s, s.q.Limit+1); err != nil {
			return nil, err
		}
		shape = collectShape("list", walk, fence)
	}
	order := listOrder(s.q.Sort)
	args := pgx.NamedArgs{"group_rows": s.q.GroupRows, "limit": s.q.Limit + 1}
	s.bindFilters(args)
	s.bindMatch(args, walk)
	bindAfter(args, order, s.q.After)
	res, err := db.runSearch(ctx, s, shape+"_"+order.name, args, false)
	if err != nil {
		return nil, err
	}
	if err := countList(res, s, est, func() (float64, error) { return db.estimateMatches(ctx, s, true, true) }); err != nil {
		return nil, err
	}
	return res, nil
}

// countList sets the count of a page of every match: exact when it is the
// only page, else the estimate known (≥ 0) or asked of estimate, unless
// the caller shows no total (NoEstimate), and at least the hits found.
func countList(res *SearchResult, s *searchPlan, known float64, estimate func() (float64, error)) error {
	res.Count, res.CountExact = int64(len(res.Hits)), s.q.After == nil && res.Next == nil
	if res.CountExact {
		return nil
	}
	if known < 0 {
		if s.q.NoEstimate {
			return nil
		}
		var err error
		if known, err = estimate(); err != nil {
			return err
		}
	}
	res.Count = max(res.Count, int64(known))
	return nil
}

// searchCandidates serves SearchFullText: the newest rankCandidates
// packages whose words match and the newest rankCandidates whose archives
// hold a path containing the text form the candidates, ordered by rank
// (matches of the path only rank 0, below every word match), name or size;
// group rows keep each group's best-ranked member. The word matches and
// their ranks come from package_words for one word without filters
// (wordPostings), else from the full-text index. The paths are not looked
// up for a page the word matches fill (wordsFillPage); a text of letters
// and digits is looked up by its tokens (bindPathLookup).
func (db *DB) searchCandidates(ctx context.Context, s *searchPlan) (*SearchResult, error) {
	words, err := db.wordPostings(ctx, s)
	if err != nil {
		return nil, err
	}
	if words == nil {
		if err := db.resolveLexemes(ctx, s); err != nil {
			return nil, err
		}
		if words, err = db.pairPostings(ctx, s); err != nil {
			return nil, err
		}
	}
	order := rankedOrder(s.q.Sort)
	args := pgx.NamedArgs{"group_rows": s.q.GroupRows, "limit": s.q.Limit + 1}
	bindAfter(args, order, s.q.After)
	// package_paths holds each package's paths joined by newlines: a text
	// with a newline of its own (which no search box sends) would match
	// across two of them, so it is not looked up.
	lookPaths := len([]rune(s.text)) >= 3 && !strings.Contains(s.text, "\n")
	var shape string
	est := -1.0
	lazyPaths := false // the page is the words' alone: the paths, which rank below, are not looked up
	if words != nil {
		if shape, lookPaths, lazyPaths, err = db.wordsShape(ctx, s, words, args, order, lookPaths); err != nil {
			return nil, err
		}
	} else {
		s.bindFiltersForPaths(args)
		args["rank_tsquery"] = tsQuery(s.words)
		s.bindMatch(args, false)
		var walk, fence bool
		if walk, est, fence, err = db.chooseWalk(ctx, s, rankCandidates); err != nil {
			return nil, err
		}
		shape = collectShape("ranked", walk, fence) + "_" + order.name
		if lookPaths {
			if lookPaths, err = db.bindPathLookup(ctx, args, s.text); err != nil {
				return nil, err
			}
		}
	}
	if lookPaths && args["creator"] != nil {
		db.bindPathsWalk(args)
		shape += creatorPathsSuffix
	}
	paged, below := s.bindPathsPage(args, lookPaths)
	// A search served by package_words without a path lookup is one
	// statement for every word (its candidates are parameters): prepared,
	// it is planned once, not on every search.
	res, err := db.runSearch(ctx, s, shape, args, words != nil && !lookPaths)
	if err != nil {
		return nil, err
	}
	// The paths found for the page alone: more may hold the text, and
	// below a cursor, others did above it.
	pathsCut := paged && (below || res.Capped && !res.wordsCapped)
	if paged {
		res.Capped = res.wordsCapped
	}
	// Without the paths the count is the words' matches: at least that many.
	res.CountExact = !res.Capped && !lazyPaths && !pathsCut
	switch {
	case res.Capped:
		err = db.countCapped(ctx, s, words, res, est)
	case pathsCut && !s.q.NoEstimate:
		err = db.countPaths(ctx, res, args)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// bindPathsPage binds how many packages a search's path lookup finds
// (paths_want), below which package (paths_below), and reports whether it
// finds those of the page alone. In relevance order without group rows or
// filters the lookup tests, a package that matches by its paths only ranks
// 0, below every word match, and such packages follow each other newest
// first (by id): when every word match is among the candidates (the paths
// are looked up only then), a page shows the first Limit+1 of them after
// its cursor (below the cursor's package when the cursor ranks 0), and the
// lookup stops there, where it used to find rankCandidates (the walk of a
// creator's chunks tested 2,200 at 1,000,000 packages for a text one chunk
// in ten holds). Each page continues below the last, so every such package
// is reached, where rankCandidates capped them; below reports a cursor
// that ranks 0. Otherwise the lookup finds the newest rankCandidates.
func (s *searchPlan) bindPathsPage(args pgx.NamedArgs, lookPaths bool) (paged, below bool) {
	args["paths_want"], args["paths_below"] = rankCandidates, int64(math.MaxInt64)
	if !lookPaths || s.q.Sort != SortRelevance || s.q.GroupRows || s.filteredForPaths() {
		return false, false
	}
	args["paths_want"] = s.q.Limit + 1
	if a := s.q.After; a != nil && a.Rank == 0 {
		args["paths_below"] = a.ID
		return true, true
	}
	return true, false
}

// countPaths counts a ranked search whose path lookup found the page's
// packages alone: its rows, or the planner's estimate of the chunks that
// hold the text (the packages that hold it, for all but a listing of more
// than 256 files), whichever is more.
func (db *DB) countPaths(ctx context.Context, res *SearchResult, args pgx.NamedArgs) error {
	est, err := db.estimateRows(ctx, "estimate_paths", args)
	if err != nil {
		return err
	}
	res.Count = max(res.Count, int64(est))
	return nil
}

// wordsShape binds the word matches w of a ranked search (args, in order)
// and chooses its shape: one that looks the paths up too (lookPaths) while
// the words fill neither the candidates nor the page (lazy: a page they
// fill, wordsFillPage) and a path may hold the text (bindPathLookup).
func (db *DB) wordsShape(ctx context.Context, s *searchPlan, w *wordMatches, args pgx.NamedArgs, order searchOrder, lookPaths bool) (shape string, looked, lazy bool, err error) {
	// The only filter package_words' shapes take is the creator's, which
	// w.ids satisfy already; only the paths need it.
	args["word_ids"], args["word_ranks"] = w.ids, w.ranks
	args["filtered"] = false
	if w.creators != nil {
		s.bindFiltersForPaths(args)
	}
	if looked = lookPaths && len(w.ids) < rankCandidates; looked {
		if lazy, err = db.wordsFillPage(ctx, s, w); err != nil {
			return "", false, false, err
		}
	}
	if looked = looked && !lazy; looked {
		if looked, err = db.bindPathLookup(ctx, args, s.text); err != nil {
			return "", false, false, err
		}
	}
	switch {
	case looked:
		shape = "words_paths_" + order.name
	case s.q.Sort == SortRelevance && !s.q.GroupRows:
		shape = "words_unjoined_rank"
	default:
		shape = "words_" + order.name
	}
	return shape, looked, lazy, nil
}

// countCapped counts a ranked search whose candidates were capped: the
// estimate est when known (≥ 0), else the planner's estimate of a pair's
// matches, or of the entries of the word's lexemes (one per package that
// holds one); none for a caller that shows no total (NoEstimate).
func (db *DB) countCapped(ctx context.Context, s *searchPlan, words *wordMatches, res *SearchResult, est float64) error {
	var err error
	switch {
	case est >= 0 || s.q.NoEstimate:
	case words.pair: // asked already unless tuned away
		est, err = db.estimateMatches(ctx, s, true, true)
	default:
		est, err = db.estimateEntries(ctx, words.lexemes, words.creators)
	}
	if err != nil {
		return err
	}
	res.Count = max(res.Count, int64(est))
	return nil
}

// wordsFillPage reports whether the word matches w alone fill the page a
// ranked search asks for. In relevance order a package that matches by its
// paths only ranks 0, below every word match, so a page whose rows (Limit,
// and one more for the next page's cursor) are all word matches of a rank
// above 0 after the cursor shows none of them: the path lookup is left to
// the page that reaches them. With group rows a row is a group of word
// matches (ranked by its best) or an ungrouped one, keyed as the page keys
// it; a package of the paths only joins its group's row without changing
// its rank, or makes a row of rank 0. In another order the paths are looked
// up on every page.
func (db *DB) wordsFillPage(ctx context.Context, s *searchPlan, w *wordMatches) (bool, error) {
	if s.q.Sort != SortRelevance || len(w.ids) <= s.q.Limit {
		return false, nil
	}
	keys := w.ids
	if s.q.GroupRows {
		var err error
		if keys, err = db.groupRowKeys(ctx, w.ids); err != nil {
			return false, err
		}
	}
	rows := map[int64]float32{} // row key → its best rank
	for i, rank := range w.ranks {
		rows[keys[i]] = max(rows[keys[i]], rank)
	}
	after, n := s.q.After, 0
	for key, rank := range rows {
		if rank > 0 && (after == nil || rank < after.Rank || (rank == after.Rank && key < after.ID)) {
			n++
		}
	}
	return n > s.q.Limit, nil
}

// groupRowKeys returns the key of the group row of each package of ids (in
// their order, one each): minus its group's id, else its own id.
func (db *DB) groupRowKeys(ctx context.Context, ids []int64) ([]int64, error) {
	rows, err := db.q.Query(ctx, searchSQL("group_row_keys", nil), pgx.NamedArgs{"ids": ids})
	if err != nil {
		return nil, wrap("search packages: group rows", err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return keys, wrap("search packages: group rows", err)
}

// groupRowColumns names the group of a collapsed row and counts its members.
const groupRowColumns = `coalesce(g.name, '') AS group_name,
	CASE WHEN g.id IS NULL THEN 0 ELSE (SELECT count(*) FROM packages m WHERE m.package_group_id = g.id) END AS group_members`

// runSearch runs the search shape's statement with args and cuts the page.
// Search queries run with QueryExecModeExec so that PostgreSQL plans each
// with its real arguments: a cached generic plan can pick an index scan
// that returns every row for a short pattern (the generic-plan trap), and
// only with its arguments does PostgreSQL drop the shape's unbound
// optional conditions. With prepared, the shape's plan does not depend on
// its arguments, and it runs as a prepared statement.
func (db *DB) runSearch(ctx context.Context, s *searchPlan, shape string, args pgx.NamedArgs, prepared bool) (*SearchResult, error) {
	opts := []any{args}
	if !prepared {
		opts = []any{pgx.QueryExecModeExec, args}
	}
	pgRows, err := db.q.Query(ctx, searchSQL(shape, args), opts...)
	if err != nil {
		return nil, wrap("search packages", err)
	}
	type row struct {
		RowKey       int64
		Rank         float32
		Capped       bool
		WordsCapped  bool
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
		res.wordsCapped = res.wordsCapped || r.WordsCapped
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
	args := pgx.NamedArgs{"ids": ids}
	bindPaths(args, text)
	// Prepared: its plan (each package's files by their index, the text
	// tested on each) does not depend on the arguments, and planning it
	// took as long as running it (0.5 ms of 1.1 at 1,000,000 packages).
	rows, err := db.q.Query(ctx, searchSQL("match_files", args), args)
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
