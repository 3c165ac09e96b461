package grouping

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time. Reported per op next to
// ns/op, it stays meaningful on a loaded machine where wall time does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs fn b.N times and reports CPU ms per op.
func loop(b *testing.B, fn func()) {
	b.Helper()
	var start time.Duration
	n := 0
	for b.Loop() {
		if n == 0 {
			start = cpuTime()
		}
		fn()
		n++
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(n)/1e6, "cpu-ms/op")
}

// BenchmarkPlan100k plans a channel of 100,000 ungrouped packages from
// scratch (budget: under 2 s).
func BenchmarkPlan100k(b *testing.B) {
	in := generate(100_000, 1)
	var p Plan
	loop(b, func() { p = Compute(in) })
	grouped := 0
	for _, g := range p.NewGroups {
		grouped += len(g.PackageIDs)
	}
	for _, j := range p.Joins {
		grouped += len(j.PackageIDs)
	}
	b.ReportMetric(float64(len(p.NewGroups)), "groups")
	b.ReportMetric(float64(grouped), "grouped")
}

// BenchmarkPlanIncremental plans one new package against a channel whose
// packages were grouped already (budget: milliseconds), for a typical
// channel of 10,000 packages and a huge one of 100,000.
func BenchmarkPlanIncremental(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			base := generate(n, 1)
			base = apply(base, Compute(base))
			// The new package arrives a minute after the newest member of an
			// AUTO_TIME group, from the same creator (a time group is one
			// creator's release), and shares nothing else with anything.
			timeGroups := map[int64]bool{}
			for _, g := range base.Groups {
				timeGroups[g.ID] = g.Source == SourceTime
			}
			var last Package
			for _, p := range base.Packages {
				if timeGroups[p.GroupID] && p.PostedAt.After(last.PostedAt) {
					last = p
				}
			}
			if last.GroupID == 0 {
				b.Fatal("no AUTO_TIME group in the test data")
			}
			in := base
			in.Packages = append(in.Packages[:len(in.Packages):len(in.Packages)], Package{
				ID:              base.Packages[len(base.Packages)-1].ID + 3,
				FileName:        "Late Arrival.zip",
				Creator:         last.Creator,
				PostedAt:        last.PostedAt.Add(time.Minute),
				SourceMessageID: base.Packages[len(base.Packages)-1].SourceMessageID + 1,
				Caption:         "a late arrival",
				Paths:           []string{"Late Arrival/a.stl", "Late Arrival/b.stl"},
			})
			var p Plan
			loop(b, func() { p = Compute(in) })
			if len(p.NewGroups) != 0 || len(p.Joins) != 1 || p.Joins[0].GroupID != last.GroupID {
				b.Fatalf("plan: %+v", p)
			}
		})
	}
}
