package store

import "testing"

// TestPairSoon: the planner's estimates measured at 1,000,000 and
// 10,000,000 packages decide for a pair or a lead where it reads less
// than the full-text index would, and against it where it would read
// more; a creator's pair may read more of its lists the more packages
// the creator has.
func TestPairSoon(t *testing.T) {
	tests := []struct {
		name                       string
		matches, entries, creators float64
		lead                       bool
		want                       int // the window, 0 for none
	}{
		{"dragon bust: 23,465 matches met within 2,638 entries", 23465, 309430, 0, false, pairWindow},
		{"knight castle: 900 matches, 14,000 entries to read", 900, 65000, 0, false, 0},
		{"knight castle at 10M: 4,708 matches, 18,861 entries to read", 4708, 443993, 0, false, 37664},
		{"many matches far apart in long lists", 4708, 1500000, 0, false, 0},
		{"a rare pair of short lists, read whole", 38, 1400, 0, false, pairWindow},
		{"a rare pair of long lists", 38, 13700, 0, false, 0},
		{"a creator's rare pair at 10M: the creator's 840,000 packages", 38, 13700, 840000, false, 33600},
		{"a creator's knight castle at 10M", 329, 37250, 840000, false, 33600},
		{"a creator's knight castle at 1M: the index is cheap", 33, 3725, 84000, false, pairWindow},
		{"a creator's pair of long lists at 1M", 33, 13700, 84000, false, 0},
		{"a creator of 10,000,000 packages: the window's bound", 329, 90000, 10000000, false, pairMaxWindow},
		{"beyond the bound", 329, 200000, 10000000, false, 0},
		{"a lead through bust's list for 23,465 matches: 1,516 entries", 23465, 177869, 0, true, leadWindow},
		{"a lead through a long list", 900, 65000, 0, true, 0},
		{"a rare lead through a short list, read whole", 38, 1400, 0, true, leadWindow},
		{"a rare lead through a long one", 38, 4000, 0, true, 0},
		{"a creator does not widen a lead", 38, 13700, 840000, true, 0},
	}
	for _, tt := range tests {
		if got := pairSoon(tt.matches, tt.entries, tt.creators, tt.lead); got != tt.want {
			t.Errorf("%s: pairSoon(%v, %v, %v, lead %v) = %v, want %v", tt.name, tt.matches, tt.entries, tt.creators, tt.lead, got, tt.want)
		}
	}
}
