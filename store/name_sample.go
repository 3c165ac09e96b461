package store

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// A fragment of a name that more than maxTokens tokens hold is looked up
// by the trigram index of names (the substring fallback), which asks for
// every trigram of the fragment at once. The lists of a common trigram are
// long: at 10,000,000 packages "ragonb" spent 22 ms in the index
// intersecting those of "rag", "ago" and "gon" (every "dragon") with that
// of "onb", where "onb" alone gave its 5,931 names in 2.6 ms. The search
// therefore asks the index for the fragment's rarest window of three
// characters alone, when a sample of the names says it is rare, and tests
// the whole fragment on what it finds (name_text, strpos over the
// lower-cased name: the same names as ILIKE for a text of ASCII letters and
// digits).

const (
	// nameSampleRows is about how many names the sample reads.
	nameSampleRows = 10_000
	// nameSampleTTL is how long a sample serves before it is taken again.
	nameSampleTTL = 10 * time.Minute
	// rareWindowShare: a window is probed alone when at most one sampled
	// name in rareWindowShare holds it (0.1 %: at most about 10,000 names
	// of 10,000,000 read again, where a common trigram's list is millions).
	rareWindowShare = 1000
	// rareWindowMinSample: a sample of fewer names (a small catalog, whose
	// index lists are short anyway) probes nothing alone.
	rareWindowMinSample = 1000
)

// nameSample counts, for a sample of the catalog's lower-cased names, the
// names that hold each window of three ASCII letters or digits.
type nameSample struct {
	mu      sync.Mutex
	taken   time.Time
	names   int
	windows map[string]int
	// minNames and share replace rareWindowMinSample and rareWindowShare
	// (tests only).
	minNames, share int
}

// rareWindow returns the window of three characters of text (ASCII letters
// and digits, lower-cased) that the fewest sampled names hold, or "" when
// none is rare enough to be looked up alone, text is shorter than four
// characters, or the DB keeps no sample (WithTx).
func (db *DB) rareWindow(ctx context.Context, text string) (string, error) {
	if db.names == nil || len(text) < 4 || !asciiAlphanumeric(text) {
		return "", nil
	}
	s := db.names
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.windows == nil || time.Since(s.taken) > nameSampleTTL {
		if err := s.take(ctx, db.q); err != nil {
			return "", err
		}
	}
	minNames, share := rareWindowMinSample, rareWindowShare
	if s.minNames > 0 {
		minNames, share = s.minNames, s.share
	}
	if s.names < minNames {
		return "", nil
	}
	best, fewest := "", s.names+1
	for i := 0; i+3 <= len(text); i++ {
		w := strings.ToLower(text[i : i+3])
		if n := s.windows[w]; n < fewest {
			best, fewest = w, n
		}
	}
	if fewest*share > s.names {
		return "", nil
	}
	return best, nil
}

// take reads about nameSampleRows names (name_sample) and counts their
// windows.
func (s *nameSample) take(ctx context.Context, q querier) error {
	rows, err := q.Query(ctx, searchSQL("name_sample", nil), pgx.NamedArgs{"rows": nameSampleRows})
	if err != nil {
		return wrap("sample names", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return wrap("sample names", err)
	}
	s.windows, s.names, s.taken = countWindows(names), len(names), time.Now()
	return nil
}

// countWindows counts, for each window of three ASCII letters or digits,
// the names that hold it (once a name).
func countWindows(names []string) map[string]int {
	counts := map[string]int{}
	seen := map[string]struct{}{}
	for _, name := range names {
		clear(seen)
		for i := 0; i+3 <= len(name); i++ {
			w := name[i : i+3]
			if !asciiAlphanumeric(w) {
				continue
			}
			if _, ok := seen[w]; !ok {
				seen[w] = struct{}{}
				counts[w]++
			}
		}
	}
	return counts
}
