package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hoard/hoard/store"
	"github.com/hoard/hoard/store/storetest"
)

func TestCountJobsByKindAndState(t *testing.T) {
	t.Parallel()
	db := storetest.NewTx(t)
	ctx := context.Background()
	// Kinds of this test's own, so that jobs other tests leave in the
	// database cannot change the counts.
	const a, b = "count_test_a", "count_test_b"
	for _, j := range []riverJob{
		{Kind: a, State: "available"},
		{Kind: a, State: "available"},
		{Kind: a, State: "pending"},
		{Kind: a, State: "scheduled"},
		{Kind: a, State: "running", Attempt: 1},
		{Kind: a, State: "retryable", Attempt: 1},
		{Kind: a, State: "discarded", Attempt: 5},
		{Kind: a, State: "completed", Attempt: 1},
		{Kind: a, State: "cancelled", Attempt: 1},
		{Kind: b, State: "running", Attempt: 1},
		{Kind: b, State: "running", Attempt: 1},
		{Kind: b, State: "completed", Attempt: 1},
	} {
		mustRiverJob(t, db, j)
	}
	counts, err := db.CountJobsByKindAndState(ctx)
	must(t, err)
	counts = slices.DeleteFunc(counts, func(c store.JobStateCount) bool { return !strings.HasPrefix(c.Kind, "count_test_") })
	want := []store.JobStateCount{
		{Kind: a, State: "available", Count: 2},
		{Kind: a, State: "discarded", Count: 1},
		{Kind: a, State: "pending", Count: 1},
		{Kind: a, State: "retryable", Count: 1},
		{Kind: a, State: "running", Count: 1},
		{Kind: a, State: "scheduled", Count: 1},
		{Kind: b, State: "running", Count: 2},
	}
	if !slices.Equal(counts, want) {
		t.Errorf("CountJobsByKindAndState:\n got  %+v\n want %+v", counts, want)
	}
}
