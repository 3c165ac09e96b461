package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// A ranked search for one word without filters — what the bot's /search
// and most catalog searches send — takes its candidates from package_words
// (migration 023): the newest packages of each lexeme the word is a prefix
// of, read from the primary key's index alone, where the full-text index
// made PostgreSQL read thousands of rows to find the newest.

// maxPrefixLexemes is the most lexemes a one-word search's prefix may
// match for package_words to serve it: each is read in its own range of
// the index, up to rankCandidates entries each. A broader prefix ("dra"
// in a catalog of made-up names: hundreds of lexemes) matches so many
// packages that walking the newest of them finds the candidates sooner.
const maxPrefixLexemes = 32

// wordMatches are the candidates package_words gives a one-word search.
type wordMatches struct {
	lexemes []string  // the lexemes the word is a prefix of
	ids     []int64   // the newest rankCandidates packages holding one, newest first
	ranks   []float32 // their ranks for the word
	// creators are the lower-cased creators the candidates were found for
	// (package_creator_words), nil for every package (package_words).
	creators []string
	// pair tells candidates of several words (pairPostings), whose count
	// is the planner's estimate of their matches; lexemes are then nil.
	pair bool
}

// wordPostings returns the candidates of a search that package_words
// serves, or nil: a ranked search of one word that normalises to one
// lexeme, that starts at most maxPrefixLexemes lexemes, without filters or
// with only the creator's, resolved to names (package_creator_words, the
// creators' own entries). Other searches go to the full-text index. Its
// statement is prepared (the plan does not depend on the word).
func (db *DB) wordPostings(ctx context.Context, s *searchPlan) (*wordMatches, error) {
	if s.mode != SearchFullText || len(s.words) != 1 {
		return nil, nil
	}
	return db.lexemePostings(ctx, s, pgx.NamedArgs{"limit": rankCandidates})
}

// lexemePostings runs word_postings (creator_word_postings for a search
// whose one filter is the creator's) with args (limit, and a cursor's
// after_key and after_id) and the search's one word, and returns what it
// found: nil when package_words does not serve the search (other
// filters, a word that does not normalise to one lexeme or starts more
// than maxPrefixLexemes).
func (db *DB) lexemePostings(ctx context.Context, s *searchPlan, args pgx.NamedArgs) (*wordMatches, error) {
	args["word"], args["max_lexemes"] = s.words[0], maxPrefixLexemes
	shape, w := "word_postings", &wordMatches{}
	if s.onlyCreators() {
		shape, args["creators"], w.creators = "creator_word_postings", s.creators, s.creators
	} else if s.hasFilters() {
		return nil, nil
	}
	var normalised int
	err := db.q.QueryRow(ctx, searchSQL(shape, args), args).Scan(&normalised, &w.lexemes, &w.ids, &w.ranks)
	if err != nil {
		return nil, wrap("search packages: newest of the word's lexemes", err)
	}
	if normalised != 1 || len(w.lexemes) > maxPrefixLexemes {
		return nil, nil
	}
	return w, nil
}

// searchWordNewest serves a one-word search listed newest first from
// package_words (word_postings), as wordPostings serves a ranked one: the
// page is the newest of each lexeme the word starts after the cursor,
// merged, and its rows are read by id (words_list, prepared). It returns
// nil for a search package_words does not serve (lexemePostings), and
// with group rows, whose groups are represented by their newest matching
// member (newest_of_group, the full-text index's shapes).
func (db *DB) searchWordNewest(ctx context.Context, s *searchPlan) (*SearchResult, error) {
	if s.mode != SearchFullTextNewest || len(s.words) != 1 || s.q.GroupRows {
		return nil, nil
	}
	args := pgx.NamedArgs{"limit": s.q.Limit + 1}
	bindAfter(args, listNewest, s.q.After)
	w, err := db.lexemePostings(ctx, s, args)
	if err != nil || w == nil {
		return nil, err
	}
	page := pgx.NamedArgs{"word_ids": w.ids, "group_rows": false, "limit": s.q.Limit + 1}
	res, err := db.runSearch(ctx, s, "words_list_"+listNewest.name, page, true)
	if err != nil {
		return nil, err
	}
	if err := countList(res, s, -1, func() (float64, error) { return db.estimateEntries(ctx, w.lexemes, w.creators) }); err != nil {
		return nil, err
	}
	return res, nil
}

// estimateEntries is the planner's estimate of the entries of lexemes (of
// creators, if not nil) in package_words: one per package that holds one,
// the count of a one-word search that is not exact.
func (db *DB) estimateEntries(ctx context.Context, lexemes, creators []string) (float64, error) {
	shape, args := "estimate_word_entries", pgx.NamedArgs{"lexemes": lexemes}
	if creators != nil {
		shape, args["creators"] = "estimate_creator_word_entries", creators
	}
	return db.estimateRows(ctx, shape, args)
}

// onlyCreators reports whether the query's one filter is the creator's,
// resolved to names.
func (s *searchPlan) onlyCreators() bool {
	if s.creators == nil {
		return false
	}
	args := pgx.NamedArgs{}
	s.bindFilters(args)
	for name := range args {
		if name != "creator" && name != "creators" {
			return false
		}
	}
	return true
}
