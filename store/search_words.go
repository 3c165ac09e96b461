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
}

// wordPostings returns the candidates of a search that package_words
// serves, or nil: a ranked search without filters, of one word that
// normalises to one lexeme, that starts at most maxPrefixLexemes lexemes.
// Other searches go to the full-text index. Its statement is prepared
// (the plan does not depend on the word).
func (db *DB) wordPostings(ctx context.Context, s *searchPlan) (*wordMatches, error) {
	if s.mode != SearchFullText || len(s.words) != 1 || s.hasFilters() {
		return nil, nil
	}
	var normalised int
	w := &wordMatches{}
	err := db.q.QueryRow(ctx, searchSQL("word_postings"), pgx.NamedArgs{"word": s.words[0], "max_lexemes": maxPrefixLexemes}).Scan(&normalised, &w.lexemes, &w.ids, &w.ranks)
	if err != nil {
		return nil, wrap("search packages: newest of the word's lexemes", err)
	}
	if normalised != 1 || len(w.lexemes) > maxPrefixLexemes {
		return nil, nil
	}
	return w, nil
}
