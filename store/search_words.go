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
	shape := "word_postings"
	args := pgx.NamedArgs{"word": s.words[0], "max_lexemes": maxPrefixLexemes}
	w := &wordMatches{}
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
