package jobs

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
	"github.com/hoard/hoard/archive"
	"github.com/hoard/hoard/messenger"
	"github.com/hoard/hoard/store/storetest"
)

func TestTopicIdle(t *testing.T) {
	progress := func(mark int64, found bool) hoard.TopicProgress {
		return hoard.TopicProgress{LastProcessedMessageID: mark, ScanState: hoard.ScanState{LastScanFoundArchives: found}}
	}
	tests := []struct {
		name string
		top  int
		p    hoard.TopicProgress
		want bool
	}{
		{"never scanned", 40, progress(0, false), false},
		{"new message", 41, progress(40, false), false},
		{"nothing new", 40, progress(40, false), true},
		// The last scan queued what it found and moved past it: a forum
		// whose topics all had archives once must not cost a history call
		// per topic on the next cycle.
		{"nothing new after a scan that found archives", 40, progress(40, true), true},
		{"watermark past the top (a deleted message)", 39, progress(40, false), true},
		{"top message unknown", 0, progress(40, false), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := topicIdle(messenger.Topic{ID: 5, TopMessageID: tt.top}, tt.p); got != tt.want {
				t.Fatalf("topicIdle = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNextWatermark(t *testing.T) {
	tests := []struct {
		name                  string
		maxID, top, hold, out int64
	}{
		{"newest message seen", 50, 50, 0, 50},
		// General's history leaves out the other topics' messages, and a
		// renamed topic's newest message is a service message: without
		// the topic list's top message the watermark would stay behind and
		// every cycle would read the same history again.
		{"top message left out of the history", 12, 2000, 0, 2000},
		{"nothing in the history", 0, 1, 0, 1},
		{"top unknown", 50, 0, 0, 50},
		{"history newer than the list", 60, 50, 0, 60},
		{"held set stops the watermark", 50, 2000, 45, 44},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nextWatermark(tt.maxID, tt.top, tt.hold); got != tt.out {
				t.Fatalf("nextWatermark(%d, %d, %d) = %d, want %d", tt.maxID, tt.top, tt.hold, got, tt.out)
			}
		})
	}
}

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

func TestPackageName(t *testing.T) {
	tests := []struct {
		parts []string
		want  string
	}{
		{[]string{"Dragon Bust.stl"}, "Dragon Bust.stl"},
		{[]string{"model.stl.001", "model.stl.002"}, "model.stl"}, // hoard's own split of a document
		{[]string{"Hoard Set.zip.001", "Hoard Set.zip.002"}, "Hoard Set.zip"},
		{[]string{"Knight.7z.001", "Knight.7z.002"}, "Knight.7z"},
		{[]string{"big.bin.001", "big.bin.002"}, "big.bin"},
		{[]string{"Orc.part1.rar", "Orc.part2.rar"}, "Orc.rar"},
		{[]string{"Orc.rar", "Orc.r00"}, "Orc.rar"},
		{[]string{"Pack.zip", "Pack.z01"}, "Pack.zip"},
	}
	for _, tt := range tests {
		var msgs []archive.Message
		for i, n := range tt.parts {
			msgs = append(msgs, archive.Message{ID: int64(i + 1), Name: n, Size: 10})
		}
		sets := archive.GroupSets(msgs)
		if len(sets) != 1 {
			t.Fatalf("%q: %d sets", tt.parts, len(sets))
		}
		if got := packageName(sets[0]); got != tt.want {
			t.Errorf("packageName(%q) = %q, want %q", tt.parts, got, tt.want)
		}
	}
}

// TestPlanSetKeepsAFailureToItsSet: a set whose handling panics (here: a
// single-file set without its file, which packageName cannot name) becomes a SKIPPED
// record saying why, instead of failing the scan of its channel.
func TestPlanSetKeepsAFailureToItsSet(t *testing.T) {
	db := storetest.NewTx(t)
	ctx := context.Background()
	ch := &hoard.Channel{PlatformID: 5150, Title: "Hostile", Kind: hoard.ChannelSource, IsActive: true}
	if err := db.UpsertChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	d := newParts(Deps{DB: db, Logger: discardLogger(), MaxSkipAttempts: 3}).scanner
	src := &channelAccess{m: &hoard.ChannelMap{ID: 1}, channel: ch}
	out, err := d.planSet(ctx, src, archive.Set{FirstMessageID: 7, Scheme: archive.Single}, nil, nil, nil, 0)
	if err != nil || out.skip == nil {
		t.Fatalf("planSet = %+v, %v; want a skipped record", out, err)
	}
	type record struct {
		Message int64
		Name    string
		Reason  hoard.SkipReason
		Status  hoard.SkipStatus
		Why     bool
	}
	got := record{out.skip.SourceMessageID, out.skip.FileName, out.skip.Reason, out.skip.Status,
		strings.HasPrefix(out.skip.LastError, "This message could not be read: ")}
	if want := (record{7, "unnamed", hoard.SkipOther, hoard.SkipGaveUp, true}); got != want {
		t.Errorf("got %+v, want %+v (%q)", got, want, out.skip.LastError)
	}
}
