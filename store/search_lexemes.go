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
	for _, w := range words {
		if w.normalised != 1 || len(w.lexemes) == 0 {
			return nil
		}
		if len(w.lexemes) > maxWordLexemes {
			terms = append(terms, tsLexeme(w.lexeme)+":*")
			continue
		}
		some = true
		quoted := make([]string, len(w.lexemes))
		for j, l := range w.lexemes {
			quoted[j] = tsLexeme(l)
		}
		terms = append(terms, "("+strings.Join(quoted, " | ")+")")
	}
	if some {
		s.lexemes = strings.Join(terms, " & ")
	}
	return nil
}

// tsLexeme quotes a lexeme for tsquery input, which then takes it as it
// is, without normalising it again (as hoard_words_of does).
func tsLexeme(l string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(l, `\`, `\\`), "'", "''") + "'"
}
