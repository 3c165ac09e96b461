package store

import (
	"context"
	"fmt"
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

// wordPostingsSQL is the one statement of wordPostings. It normalises $1,
// a search word, as search vectors' words are (english: "Castles" →
// castl) and lists up to $2+1 lexemes of package_words that start with
// it, stepping through the index from one distinct lexeme to the next.
// When the word normalised to one lexeme (not a stop word, rarely two)
// and at most $2 lexemes start with it, it also lists the newest
// rankCandidates packages that hold any of them, newest first, with
// their rank for the word: each lexeme's newest from its range of the
// index, merged, a package's lexemes' ranks summed (as ts_rank sums
// them). The newest of the union are among the lists' heads, and each of
// them is in the list of every lexeme it holds: fewer than
// rankCandidates packages of any one list are newer than one of them.
// It returns how many lexemes the word normalised to, the lexemes, and
// the packages' ids and ranks.
var wordPostingsSQL = `WITH RECURSIVE q AS MATERIALIZED (
		SELECT tsvector_to_array(to_tsvector('english', $1::text)) AS lex
	), l(word) AS (
		SELECT (SELECT w.word FROM package_words w WHERE w.word >= (SELECT lex[1] FROM q) ORDER BY w.word LIMIT 1)
		UNION ALL
		SELECT (SELECT w.word FROM package_words w WHERE w.word > l.word ORDER BY w.word LIMIT 1)
		FROM l WHERE starts_with(l.word, (SELECT lex[1] FROM q))
	), lexemes AS MATERIALIZED (
		SELECT ARRAY(SELECT word FROM l WHERE starts_with(word, (SELECT lex[1] FROM q)) LIMIT $2 + 1) AS words
	), newest AS MATERIALIZED (
		SELECT x.created_at, x.package_id, sum(x.rank)::real AS rank
		FROM lexemes, unnest(lexemes.words) AS u(word)
		CROSS JOIN LATERAL (SELECT w.created_at, w.package_id, w.rank FROM package_words w WHERE w.word = u.word
			ORDER BY w.created_at DESC, w.package_id DESC LIMIT ` + fmt.Sprint(rankCandidates) + `) x
		WHERE (SELECT cardinality(lex) FROM q) = 1 AND cardinality(lexemes.words) <= $2
		GROUP BY x.created_at, x.package_id
		ORDER BY x.created_at DESC, x.package_id DESC LIMIT ` + fmt.Sprint(rankCandidates) + `
	)
	SELECT (SELECT cardinality(lex) FROM q), (SELECT words FROM lexemes),
		ARRAY(SELECT package_id FROM newest ORDER BY created_at DESC, package_id DESC),
		ARRAY(SELECT rank FROM newest ORDER BY created_at DESC, package_id DESC)`

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
	if s.mode != SearchFullText || len(s.words) != 1 || len(s.filters(new(sqlArgs))) > 0 {
		return nil, nil
	}
	var normalised int
	w := &wordMatches{}
	err := db.q.QueryRow(ctx, wordPostingsSQL, s.words[0], maxPrefixLexemes).Scan(&normalised, &w.lexemes, &w.ids, &w.ranks)
	if err != nil {
		return nil, wrap("search packages: newest of the word's lexemes", err)
	}
	if normalised != 1 || len(w.lexemes) > maxPrefixLexemes {
		return nil, nil
	}
	return w, nil
}

// candidates is the SELECT of a ranked search's candidates (CTEs t and f
// hold their ids: the words' and, with paths, the paths') with the ranks
// package_words gave, 0 for a match of the paths only. Ordered by rank
// alone, without group rows, they need nothing of their packages' rows;
// otherwise the rows give what the order and the groups need.
func (w *wordMatches) candidates(a *sqlArgs, q SearchQuery, paths bool) string {
	ranked := "unnest(" + a.add(w.ids) + "::bigint[], " + a.add(w.ranks) + "::real[]) AS c(id, rank)"
	if q.Sort == SortRelevance && !q.GroupRows && !paths {
		return "SELECT c.id, c.rank FROM " + ranked
	}
	return `SELECT p.id, p.created_at, p.package_group_id, lower(p.file_name) AS sort_name, p.file_size,
			coalesce(c.rank, 0)::real AS rank
		FROM packages p LEFT JOIN ` + ranked + ` ON c.id = p.id
		WHERE p.id IN (SELECT id FROM t UNION SELECT id FROM f)`
}
