package hoard

import (
	"testing"
	"time"
)

func TestNextScheduledCycleIsOnTheIntervalsMultiples(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tt := range []struct {
		now      string
		interval time.Duration
		want     string
	}{
		{"2026-11-29T11:35:25Z", time.Hour, "2026-11-29T12:00:00Z"},
		{"2026-11-29T12:00:00Z", time.Hour, "2026-11-29T13:00:00Z"},
		{"2026-11-29T11:35:25Z", 15 * time.Minute, "2026-11-29T11:45:00Z"},
		{"2026-11-29T13:35:25+02:00", time.Hour, "2026-11-29T12:00:00Z"},
		{"2026-11-29T23:59:59Z", 24 * time.Hour, "2026-11-30T00:00:00Z"},
	} {
		if got := NextScheduledCycle(at(tt.now), tt.interval); !got.Equal(at(tt.want)) {
			t.Errorf("NextScheduledCycle(%s, %s) = %s, want %s", tt.now, tt.interval, got, tt.want)
		}
	}
}
