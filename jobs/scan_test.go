package jobs

import (
	"testing"
	"time"

	"github.com/hoard/hoard"
)

func TestShouldScan(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	hour := time.Hour
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	tests := []struct {
		name   string
		state  hoard.ScanState
		manual bool
		want   bool
	}{
		{"never scanned", hoard.ScanState{}, false, true},
		{"found archives last time", hoard.ScanState{LastScannedAt: ago(time.Minute), LastScanFoundArchives: true}, false, true},
		{"idle, scanned a minute ago", hoard.ScanState{LastScannedAt: ago(time.Minute)}, false, false},
		{"idle, scanned a minute ago, user triggered", hoard.ScanState{LastScannedAt: ago(time.Minute)}, true, true},
		{"idle once, one interval ago", hoard.ScanState{LastScannedAt: ago(hour), ConsecutiveEmptyScans: 1}, false, true},
		{"idle 2 scans, one interval ago", hoard.ScanState{LastScannedAt: ago(hour), ConsecutiveEmptyScans: 2}, false, true},
		// From 3 empty scans on: every 2, 3, … cycles, at most every 8th.
		{"idle 3 scans, one interval ago", hoard.ScanState{LastScannedAt: ago(hour), ConsecutiveEmptyScans: 3}, false, false},
		{"idle 3 scans, two intervals ago", hoard.ScanState{LastScannedAt: ago(2 * hour), ConsecutiveEmptyScans: 3}, false, true},
		{"idle 3 scans, a little under two intervals (slack)", hoard.ScanState{LastScannedAt: ago(2*hour - 5*time.Minute), ConsecutiveEmptyScans: 3}, false, true},
		{"idle 5 scans, three intervals ago", hoard.ScanState{LastScannedAt: ago(3 * hour), ConsecutiveEmptyScans: 5}, false, false},
		{"idle 5 scans, four intervals ago", hoard.ScanState{LastScannedAt: ago(4 * hour), ConsecutiveEmptyScans: 5}, false, true},
		{"idle 100 scans, seven intervals ago", hoard.ScanState{LastScannedAt: ago(7 * hour), ConsecutiveEmptyScans: 100}, false, false},
		{"idle 100 scans, eight intervals ago: the cap", hoard.ScanState{LastScannedAt: ago(8 * hour), ConsecutiveEmptyScans: 100}, false, true},
		{"idle 100 scans, user triggered", hoard.ScanState{LastScannedAt: ago(time.Minute), ConsecutiveEmptyScans: 100}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := shouldScan(tt.state, now, hour, tt.manual)
			if got != tt.want {
				t.Fatalf("shouldScan = %v (%q), want %v", got, why, tt.want)
			}
			if !got && why == "" {
				t.Fatal("a skipped scan must say why")
			}
		})
	}
}
