package grouping

import (
	"reflect"
	"testing"
	"time"
)

var t0 = time.Date(2024, 1, 15, 12, 0, 0, 0, time.UTC)

// at is t0 plus m minutes.
func at(m float64) time.Time { return t0.Add(time.Duration(m * float64(time.Minute))) }

// runPass runs one pass alone over in and returns its plan without
// conflicts.
func runPass(fn func(*state), in Input) Plan {
	s := newState(in)
	fn(s)
	return Plan{NewGroups: s.newGroups, Joins: s.joinList(), Merges: s.mergeList()}
}

func checkPlan(t *testing.T, got, want Plan) {
	t.Helper()
	norm := func(p Plan) Plan {
		if len(p.NewGroups) == 0 {
			p.NewGroups = nil
		}
		if len(p.Joins) == 0 {
			p.Joins = nil
		}
		if len(p.Conflicts) == 0 {
			p.Conflicts = nil
		}
		if len(p.Merges) == 0 {
			p.Merges = nil
		}
		if len(p.Ungroup) == 0 {
			p.Ungroup = nil
		}
		if len(p.Renames) == 0 {
			p.Renames = nil
		}
		if len(p.Dissolve) == 0 {
			p.Dissolve = nil
		}
		return p
	}
	got, want = norm(got), norm(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("plan mismatch\n got: %+v\nwant: %+v", got, want)
	}
}

func ids(v ...int64) []int64 { return v }
