package store

import (
	"context"
	"slices"
	"strconv"
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

// maxPairLexemes is the most lexemes the two words whose lists a pair reads
// (word_window) may start together: a window merges the lists of its
// word's lexemes as it reads them, one index range a lexeme, and
// PostgreSQL plans each (about 0.1 ms apiece, measured in psql), so 24
// come to some 2.4 ms of planning. At 1,000,000 packages "drag bus" ("drag" starts 20 lexemes,
// "dragon" among them; "bus" one, "bust") met its newest 200 within 1,254
// entries of drag's lists and 1,676 of bust's, from the indexes alone, in
// 4.9–5.5 ms, where reading bust's list and testing each package's words
// (lead) took 6.4–8.6 (four runs each in turn).
const maxPairLexemes = 24

// windowLexemes is the most lexemes of one word a word_window reads
// (pair_first_0 … and pair_second_0 …): the other word of the pair starts
// one at least.
const windowLexemes = maxPairLexemes - 1

// resolveLexemes sets s.lexemes to the words as a tsquery of the lexemes
// each starts, for two words or more: a word that starts more than
// maxWordLexemes stays a prefix, and when every word does and fewer than
// two start few enough for a pair's window (windowLexemes), s.lexemes
// stays empty; when a word starts none, to its own lexeme, which matches
// nothing. s.wordLexemes are the lexemes of each word that starts few
// enough for a window (nil for another). One word is read from package_words itself (wordPostings,
// searchWordNewest), or where it cannot be stays a prefix: looking its
// lexemes up for the full-text index cost more than it saved
// (BenchmarkSearch middle_words_newest p50 5.4 → 6.5 ms at 1,000,000). It
// leaves s.lexemes empty, the words matched as prefixes, when a word does
// not normalise to exactly one lexeme (a stop word, or one the parser
// splits): to_tsquery decides those.
func (db *DB) resolveLexemes(ctx context.Context, s *searchPlan) error {
	if s.mode != SearchFullText && s.mode != SearchFullTextNewest || len(s.words) < 2 {
		return nil
	}
	args := pgx.NamedArgs{"words": s.words, "max_lexemes": windowLexemes}
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
	for _, w := range words {
		if w.normalised == 1 && len(w.lexemes) == 0 {
			// No package holds a lexeme the word starts, so none matches
			// every word: its own lexeme, which no search vector holds,
			// says so to the index at once, where the other words as
			// prefixes made it collect every match of each (27 ms for
			// "arm_left_07" at 10,000,000 packages: "arm" starts "armor").
			s.lexemes = tsLexeme(w.lexeme)
			return nil
		}
	}
	terms, some, pairable := make([]string, 0, len(words)), false, 0
	lists := make([][]string, len(words))
	for i, w := range words {
		if w.normalised != 1 {
			return nil
		}
		if len(w.lexemes) <= windowLexemes {
			lists[i] = w.lexemes
			pairable++
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
	if some || pairable >= 2 {
		s.lexemes, s.wordLexemes = strings.Join(terms, " & "), lists
	}
	return nil
}

// bindPair binds the arguments of the pair and lead shapes (search.sql)
// and returns the lexemes whose lists they read. A pair reads the lists of
// the two words that start the fewest lexemes (the first of equals), at
// most maxPairLexemes together (pair_first_N, pair_second_N), and tests the rest,
// each of at most maxWordLexemes, on what they find (rest_group: a word's
// index, rest_word: one of its lexemes). A lead, where no pair can serve
// (a word is matched as a prefix or starts more lexemes than the rest may)
// but a word starts a single lexeme, reads that lexeme's list
// (pair_first_0) and tests the words on each package. The family is pair
// or lead, with one creator's filter creator_pair or creator_lead (their
// statements are the family's name and _postings); "", binding nothing,
// when the search has other filters or neither serves.
func (s *searchPlan) bindPair(args pgx.NamedArgs) (family string, read []string) {
	creator := ""
	switch {
	case s.wordLexemes == nil:
		return "", nil
	case s.onlyCreators() && len(s.creators) == 1:
		creator = "creator_"
	case s.hasFilters():
		return "", nil
	}
	lists := s.wordLexemes
	order := make([]int, len(lists)) // the words by their lexemes, fewest first, prefixes last
	for i := range order {
		order[i] = i
	}
	lexemes := func(i int) int {
		if lists[i] == nil {
			return maxPairLexemes
		}
		return len(lists[i])
	}
	slices.SortStableFunc(order, func(a, b int) int { return lexemes(a) - lexemes(b) })
	first, second := order[0], order[1]
	pair := lexemes(first)+lexemes(second) <= maxPairLexemes
	for _, i := range order[2:] {
		pair = pair && lexemes(i) <= maxWordLexemes
	}
	switch {
	case pair:
		bindWindow(args, "pair_first", lists[first])
		bindWindow(args, "pair_second", lists[second])
		var groups []int32
		var rest []string
		for _, i := range order[2:] {
			for _, l := range lists[i] {
				groups, rest = append(groups, int32(i)), append(rest, l)
			}
		}
		if groups != nil {
			args["rest_group"], args["rest_word"] = groups, rest
		}
		return creator + "pair", slices.Concat(lists[first], lists[second])
	case lexemes(first) == 1:
		bindWindow(args, "pair_first", lists[first])
		return creator + "lead", lists[first]
	}
	return "", nil
}

// bindWindow binds the lexemes of a word_window (side_0, side_1, …, and
// side, all of them).
func bindWindow(args pgx.NamedArgs, side string, lexemes []string) {
	args[side] = lexemes
	for i, l := range lexemes {
		args[side+"_"+strconv.Itoa(i)] = l
	}
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
// collecting its matches from the full-text index. A lead reads one list
// and each entry's package (a heap page where a pair reads the index
// alone): it serves when it expects to find them within leadMaxRead
// entries. pairWindow and leadWindow bound what they read however wrong
// the estimates are (pair_window).
const (
	pairMaxRead = 4000
	pairWindow  = 10000
	leadMaxRead = 2000
	leadWindow  = 4000
	// creatorPairRead is the entries a creator's pair may read per
	// package of the creator. The full-text index finds a creator's
	// words through the creator's whole posting list in the index of
	// creators and words: at 10,000,000 packages (the benchmark's creator
	// has 840,000) "goblin wizard" took 11 ms there for 38 matches,
	// "knight castle" 18 ms for 329, where the pair of "knight castle"
	// read 24,000 entries in 6.7 ms (0.28 µs each).
	creatorPairRead = 0.04
	// pairMaxWindow bounds what a pair reads of each list however many
	// packages the creator has or matches the words have: 100,000
	// entries, about 28 ms.
	pairMaxWindow = 100000
	// pairReadPerMatch is the entries a pair may read per match the
	// full-text index would collect instead: that reads the two lexemes'
	// lists in its own index and each match's row for its date. At
	// 10,000,000 packages "knight castle" (3,838 matches, 443,993 entries)
	// took 23–35 ms to collect, where its pair met the newest 200 within
	// 24,577 entries in 9 ms (0.36 µs each); at 1,000,000 (900 matches,
	// 14,000 entries to read) collecting was the cheaper.
	pairReadPerMatch = 8
)

// pairPostings returns the candidates of a search of words that the pair
// or lead statements serve (bindPair) when the planner expects them to
// find its newest matches soon, else nil.
func (db *DB) pairPostings(ctx context.Context, s *searchPlan) (*wordMatches, error) {
	tuning := db.tuned()
	args := pgx.NamedArgs{"rank_tsquery": tsQuery(s.words)}
	family, read := s.bindPair(args)
	if family == "" {
		return nil, nil
	}
	lead := strings.HasSuffix(family, "lead")
	args["pair_window"] = tuning.pairWindow
	if lead {
		args["pair_window"] = tuning.leadWindow
	}
	w := &wordMatches{pair: true}
	if strings.HasPrefix(family, "creator_") {
		w.creators = s.creators
	}
	if !tuning.pairAlways {
		window, err := db.pairMeetsSoon(ctx, s, w, read, lead)
		if err != nil || window == 0 {
			return nil, err
		}
		args["pair_window"] = window
	}
	s.bindFilters(args)
	s.bindMatch(args, false)
	err := db.q.QueryRow(ctx, searchSQL(family+"_postings", args), pgx.QueryExecModeExec, args).Scan(&w.ids, &w.ranks)
	if err != nil {
		return nil, wrap("search packages: newest packages of the words", err)
	}
	return w, nil
}

// pairMeetsSoon returns the entries the pair may read of each list when it
// expects to meet the newest rankCandidates of the search's matches (the
// planner's estimate) within pairMaxRead entries of the lists of the
// lexemes it reads, read (of w's creators, if any), or with lead when the
// lead expects to find them within leadMaxRead entries of its one; a
// search of fewer matches reads the lists whole (pairSoon). Else 0. A
// creator's pair may read what the full-text index's look-up of the
// creator's words would cost (creatorPairRead); its window grows to that.
func (db *DB) pairMeetsSoon(ctx context.Context, s *searchPlan, w *wordMatches, read []string, lead bool) (int, error) {
	matches, err := db.estimateMatches(ctx, s, true, true)
	if err != nil {
		return 0, err
	}
	entries, err := db.estimateEntries(ctx, read, w.creators)
	if err != nil {
		return 0, err
	}
	var creators float64 // the creator's packages, asked only when they may decide
	if !lead && w.creators != nil && pairRead(matches, entries) > pairMaxRead {
		if creators, err = db.estimateMatches(ctx, s, true, false); err != nil {
			return 0, err
		}
	}
	return pairSoon(matches, entries, creators, lead), nil
}

// pairRead is the entries a pair or lead reads for the newest
// rankCandidates of matches spread evenly over lists of entries; a search
// of fewer matches reads the lists whole.
func pairRead(matches, entries float64) float64 {
	if matches < rankCandidates {
		return entries
	}
	return rankCandidates * entries / matches
}

// pairSoon decides for pairMeetsSoon on the planner's estimates: the
// search's matches, the entries of the lists the pair (or with lead, the
// lead) reads, and for a creator's pair the creator's packages (else 0).
// It returns the entries the pair may read of each list, 0 for none.
func pairSoon(matches, entries, creators float64, lead bool) int {
	read := pairRead(matches, entries)
	// A creator's pair's window, or one that many matches make worth it.
	grown := min(max(creators*creatorPairRead, matches*pairReadPerMatch), pairMaxWindow)
	switch {
	case lead && read <= leadMaxRead:
		return leadWindow
	case lead:
		return 0
	case read <= pairMaxRead:
		return pairWindow
	case read <= grown:
		return int(grown)
	}
	return 0
}
