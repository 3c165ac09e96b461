package store

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
)

// A search of words the full-text index serves matches every word as a
// prefix ("kni:* & cas:*"). The index looks a prefix up by scanning its
// entries for the keys that start with it, which cost 16 ms for two words
// of one lexeme each at 1,000,000 packages, where the same lexemes looked
// up as they are ("knight & castl") cost 1.6 ms. package_words lists the
// catalog's lexemes in byte order, so the few that start with a word are
// found by stepping through its index (as a one-word search does), and
// the words are matched as those lexemes: the same packages, since
// package_words holds every lexeme of every search vector. The rank is
// still ts_rank of the prefixes (rank_tsquery).

// maxWordLexemes is the most lexemes a word may start to be matched as
// them: the index intersects the lists of single lexemes by skipping
// through them, but merges the lists of several first. At 1,000,000
// packages "kni cas" (one lexeme each) went from 16 to 6 ms and "gob wiz"
// from 7.5 to 4, where "drag bus" ("drag" starts 20) went from 7.7 to
// 12.8 ms with "drag" as its 20 lexemes.
const maxWordLexemes = 4

// resolveLexemes sets s.lexemes to the words as a tsquery of the lexemes
// each starts, for two words or more: a word that starts more than
// maxWordLexemes stays a prefix, and when every word does, s.lexemes stays
// empty. One word stays a prefix: a one-word
// search listed newest first paid more for the look-up than it saved
// (BenchmarkSearch middle_words_newest p50 5.4 → 6.5 ms at 1,000,000). It leaves s.lexemes empty, the words matched as prefixes, when
// a word does not normalise to exactly one lexeme (a stop word, or one
// the parser splits) or starts none: to_tsquery decides those.
func (db *DB) resolveLexemes(ctx context.Context, s *searchPlan) error {
	if s.mode != SearchFullText && s.mode != SearchFullTextNewest || len(s.words) < 2 {
		return nil
	}
	args := pgx.NamedArgs{"words": s.words, "max_lexemes": maxWordLexemes}
	rows, err := db.q.Query(ctx, searchSQL("word_lexemes", args), args)
	if err != nil {
		return wrap("search packages: lexemes of the words", err)
	}
	type wordLexemes struct {
		normalised int
		lexeme     string   // the word normalised
		lexemes    []string // the catalog's lexemes that start with it
	}
	words, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (w wordLexemes, err error) {
		return w, r.Scan(&w.normalised, &w.lexeme, &w.lexemes)
	})
	if err != nil {
		return wrap("search packages: lexemes of the words", err)
	}
	terms, some := make([]string, 0, len(words)), false
	lists := make([][]string, len(words))
	for i, w := range words {
		if w.normalised != 1 || len(w.lexemes) == 0 {
			return nil
		}
		if len(w.lexemes) > maxWordLexemes {
			terms = append(terms, tsLexeme(w.lexeme)+":*")
			continue
		}
		lists[i] = w.lexemes
		some = true
		quoted := make([]string, len(w.lexemes))
		for j, l := range w.lexemes {
			quoted[j] = tsLexeme(l)
		}
		terms = append(terms, "("+strings.Join(quoted, " | ")+")")
	}
	if some {
		s.lexemes, s.wordLexemes = strings.Join(terms, " & "), lists
	}
	return nil
}

// bindPair binds the arguments of the pair shapes (search.sql): the first
// two words that start one lexeme each (pair_first, pair_second) and the
// lexemes of the rest (rest_group, rest_word). It returns the shapes'
// family, pair or, with one creator's filter, creator_pair (their
// statements are the family's name and _postings); or "", binding
// nothing, when the search has other filters, a word matched as a prefix,
// or fewer than two words of one lexeme.
func (s *searchPlan) bindPair(args pgx.NamedArgs) string {
	family := "pair"
	switch {
	case s.wordLexemes == nil:
		return ""
	case s.onlyCreators() && len(s.creators) == 1:
		family = "creator_pair"
	case s.hasFilters():
		return ""
	}
	var pair, rest []string
	var groups []int32
	for i, lexemes := range s.wordLexemes {
		switch {
		case lexemes == nil:
			return ""
		case len(lexemes) == 1 && len(pair) < 2:
			pair = append(pair, lexemes[0])
		default:
			for _, l := range lexemes {
				groups, rest = append(groups, int32(i)), append(rest, l)
			}
		}
	}
	if len(pair) < 2 {
		return ""
	}
	args["pair_first"], args["pair_second"] = pair[0], pair[1]
	if groups != nil {
		args["rest_group"], args["rest_word"] = groups, rest
	}
	return family
}

// tsLexeme quotes a lexeme for tsquery input, which then takes it as it
// is, without normalising it again (as hoard_words_of does).
func tsLexeme(l string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(l, `\`, `\\`), "'", "''") + "'"
}

// A pair serves a search when the planner expects it to meet its newest
// rankCandidates matches soon: within pairMaxRead entries of the two
// lexemes' lists read together (rankCandidates × entries ÷ matches, the
// matches spread evenly over the lists). At 1,000,000 packages "dragon
// bust" (131,561 and 177,869 entries, 23,465 matches) met its newest 200
// within 1,260 and 1,716 entries in 1.5 ms, where the full-text index
// collected or walked them in 7–9 ms; "knight castle" (about 900
// matches in 65,000 entries) would read 14,000 entries, slower than
// collecting its matches from the full-text index. pairWindow bounds
// what a pair reads of each list however wrong the estimates are
// (pair_matches).
const (
	pairMaxRead = 4000
	pairWindow  = 10000
)

// pairPostings returns the candidates of a search of words that the pair
// statements serve (bindPair) when the planner expects the pair to meet
// its newest matches within pairMaxRead entries, else nil.
func (db *DB) pairPostings(ctx context.Context, s *searchPlan) (*wordMatches, error) {
	tuning := db.tuned()
	args := pgx.NamedArgs{"pair_window": tuning.pairWindow, "rank_tsquery": tsQuery(s.words)}
	family := s.bindPair(args)
	if family == "" {
		return nil, nil
	}
	w := &wordMatches{pair: true}
	if family == "creator_pair" {
		w.creators = s.creators
	}
	if !tuning.pairAlways {
		ok, err := db.pairMeetsSoon(ctx, s, w, args)
		if err != nil || !ok {
			return nil, err
		}
	}
	s.bindFilters(args)
	s.bindMatch(args, false)
	err := db.q.QueryRow(ctx, searchSQL(family+"_postings", args), pgx.QueryExecModeExec, args).Scan(&w.ids, &w.ranks)
	if err != nil {
		return nil, wrap("search packages: newest packages of the words", err)
	}
	return w, nil
}

// pairMeetsSoon reports whether the pair bound in args meets the newest
// rankCandidates of the search's matches (the planner's estimate) within
// pairMaxRead entries of its two lexemes' lists (of w's creators, if any).
func (db *DB) pairMeetsSoon(ctx context.Context, s *searchPlan, w *wordMatches, args pgx.NamedArgs) (bool, error) {
	matches, err := db.estimateMatches(ctx, s, true, true)
	if err != nil || matches < rankCandidates {
		return false, err
	}
	shape, est := "estimate_word_entries", pgx.NamedArgs{"lexemes": []string{args["pair_first"].(string), args["pair_second"].(string)}}
	if w.creators != nil {
		shape, est["creators"] = "estimate_creator_word_entries", w.creators
	}
	entries, err := db.estimateRows(ctx, shape, est)
	if err != nil {
		return false, err
	}
	return rankCandidates*entries/matches <= pairMaxRead, nil
}
