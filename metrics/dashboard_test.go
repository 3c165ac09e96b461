package metrics

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hoard/hoard"
)

// dashboardPath is the Grafana dashboard compose's monitoring profile loads.
const dashboardPath = "../deploy/grafana/dashboards/hoard.json"

// exported returns every metric family a process exports, by name, with
// its label names: a Metrics told about one of everything.
func exported(t *testing.T) map[string][]string {
	t.Helper()
	m := New(Options{Version: "test", SpoolDir: t.TempDir(), Logger: discard(),
		CountJobs: func(context.Context) ([]JobCount, error) {
			return []JobCount{{Kind: "scan_channel", State: "available", Count: 1}}, nil
		}})
	m.JobWorked("scan_channel", "ingest", "completed", time.Second)
	m.Downloaded(1)
	m.Indexed()
	m.Duplicate(RuleContentHash)
	m.Skipped(hoard.SkipOther)
	p := m.Platform("1")
	p.Request("messages.getHistory")
	p.FloodWait("upload.getFile", time.Second)
	p.Downloaded(1)
	m.Search(true, time.Millisecond)
	m.HTTPRequest("/", "GET", 200, time.Millisecond)
	m.BotCommand("help")
	m.BotDelivery("sent", 1)
	s := scrape(t, m)
	out := map[string][]string{}
	for name, f := range s.Families {
		labels := []string{"instance", "job"}
		for _, metric := range f.GetMetric() {
			for _, l := range metric.GetLabel() {
				if !slices.Contains(labels, l.GetName()) {
					labels = append(labels, l.GetName())
				}
			}
		}
		if f.GetType().String() == "HISTOGRAM" {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				out[name+suffix] = append(slices.Clone(labels), "le")
			}
			continue
		}
		out[name] = labels
	}
	return out
}

var (
	metricName = regexp.MustCompile(`\b(?:hoard|go|process)_[a-z_]+\b`)
	byClause   = regexp.MustCompile(`\bby \(([^)]*)\)`)
	matcher    = regexp.MustCompile(`\{([^}]*)\}`)
)

// TestDashboardUsesExportedMetrics keeps the dashboard and the code in
// step: every metric a panel queries is exported, every label it groups or
// filters by is one of those metrics', and every metric of hoard's own
// (its build info aside) is on the dashboard.
func TestDashboardUsesExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	families := exported(t)
	used := map[string]bool{}
	for _, p := range dash.Panels {
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			names := metricName.FindAllString(target.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: %q queries no metric", p.Title, target.Expr)
			}
			var labels []string
			for _, n := range names {
				l, ok := families[n]
				if !ok {
					t.Errorf("panel %q queries %s, which hoard does not export", p.Title, n)
				}
				labels = append(labels, l...)
				used[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")] = true
				used[n] = true
			}
			var wanted []string
			for _, by := range byClause.FindAllStringSubmatch(target.Expr, -1) {
				wanted = append(wanted, strings.Split(by[1], ",")...)
			}
			for _, sel := range matcher.FindAllStringSubmatch(target.Expr, -1) {
				for _, pair := range strings.Split(sel[1], ",") {
					name, _, _ := strings.Cut(pair, "=")
					wanted = append(wanted, name)
				}
			}
			for _, l := range wanted {
				if l = strings.TrimSpace(l); !slices.Contains(labels, l) {
					t.Errorf("panel %q uses label %q, which %v do not have", p.Title, l, names)
				}
			}
		}
	}
	for name := range families {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		if strings.HasPrefix(name, "hoard_") && name != "hoard_build_info" && !used[base] {
			t.Errorf("%s is on no panel of the dashboard", name)
		}
	}
}
