package metrics_test

import (
	"slices"
	"testing"

	"github.com/hoard/hoard/metrics"
	"github.com/hoard/hoard/store"
)

// TestDedupRulesAreTheStores: the jobs pass the store's rule names, which
// the metrics must know, or they would count as "other".
func TestDedupRulesAreTheStores(t *testing.T) {
	got := []string{metrics.RuleRemoteID, metrics.RuleSourceMessage, metrics.RuleNameSize, metrics.RuleContentHash}
	want := []string{store.DupRemoteUniqueID, store.DupSourceMessage, store.DupNameAndSize, store.DupContentHash}
	if !slices.Equal(got, want) {
		t.Errorf("metrics' dedup rules %q, the store's %q", got, want)
	}
}
