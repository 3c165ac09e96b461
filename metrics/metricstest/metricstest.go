// Package metricstest reads a Prometheus scrape the way Prometheus and
// promtool would, for tests: it parses the text format with expfmt, refuses
// a series that appears twice, lints the families with promlint (the checks
// of `promtool check metrics`), and gives the samples by series.
package metricstest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape is one parsed scrape.
type Scrape struct {
	// Samples holds every sample by its series, name{label="value",…}
	// with the labels sorted (SeriesKey); a histogram gives its _bucket,
	// _sum and _count series.
	Samples map[string]float64
	// Families are the metric families by name.
	Families map[string]*dto.MetricFamily

	list []Sample
}

// Sample is one sample of a scrape.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// SeriesKey renders a series as Scrape.Samples keys it.
func SeriesKey(name string, labels map[string]string) string {
	if len(labels) == 0 {
		return name
	}
	keys := slices.Sorted(maps.Keys(labels))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, labels[k])
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

// Parse reads a scrape in Prometheus's text format. It fails on text
// Prometheus would refuse, on a series that appears twice and on any
// problem promlint finds.
func Parse(text []byte) (Scrape, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		return Scrape{}, fmt.Errorf("parse the scrape: %w", err)
	}
	names := slices.Sorted(maps.Keys(fams))
	list := make([]*dto.MetricFamily, 0, len(fams))
	for _, name := range names {
		list = append(list, fams[name])
	}
	problems, err := promlint.NewWithMetricFamilies(list).Lint()
	if err != nil {
		return Scrape{}, fmt.Errorf("lint the scrape: %w", err)
	}
	if len(problems) > 0 {
		var b strings.Builder
		for _, p := range problems {
			fmt.Fprintf(&b, "\n  %s: %s", p.Metric, p.Text)
		}
		return Scrape{}, fmt.Errorf("the scrape has lint problems:%s", b.String())
	}
	s := Scrape{Samples: map[string]float64{}, Families: fams}
	for _, name := range names {
		samples, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.Now()}, fams[name])
		if err != nil {
			return Scrape{}, fmt.Errorf("samples of %s: %w", name, err)
		}
		for _, smp := range samples {
			labels := map[string]string{}
			for k, v := range smp.Metric {
				if k != model.MetricNameLabel {
					labels[string(k)] = string(v)
				}
			}
			sm := Sample{Name: string(smp.Metric[model.MetricNameLabel]), Labels: labels, Value: float64(smp.Value)}
			key := SeriesKey(sm.Name, labels)
			if _, dup := s.Samples[key]; dup {
				return Scrape{}, fmt.Errorf("series %s appears twice", key)
			}
			s.Samples[key] = sm.Value
			s.list = append(s.list, sm)
		}
	}
	return s, nil
}

// Get scrapes url (a /metrics endpoint) and parses the answer.
func Get(ctx context.Context, url string) (Scrape, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Scrape{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Scrape{}, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Scrape{}, fmt.Errorf("scrape %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return Scrape{}, fmt.Errorf("scrape %s: %s: %s", url, resp.Status, body)
	}
	return Parse(body)
}

// Series returns the samples of metric name (a histogram's _count, say)
// whose labels include every pair of match, by SeriesKey.
func (s Scrape) Series(name string, match map[string]string) map[string]float64 {
	out := map[string]float64{}
	for _, smp := range s.matching(name, match) {
		out[SeriesKey(smp.Name, smp.Labels)] = smp.Value
	}
	return out
}

// Sum adds up the samples of metric name whose labels include every pair
// of match.
func (s Scrape) Sum(name string, match map[string]string) float64 {
	var sum float64
	for _, smp := range s.matching(name, match) {
		sum += smp.Value
	}
	return sum
}

// By adds up the samples of metric name by the value of label, leaving out
// zeros.
func (s Scrape) By(name, label string) map[string]float64 {
	out := map[string]float64{}
	for _, smp := range s.matching(name, nil) {
		if smp.Value != 0 {
			out[smp.Labels[label]] += smp.Value
		}
	}
	return out
}

// LabelValues returns the distinct values label takes in metric name,
// sorted.
func (s Scrape) LabelValues(name, label string) []string {
	var out []string
	for _, smp := range s.matching(name, nil) {
		if v, ok := smp.Labels[label]; ok && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// All returns the samples of metric name whose labels include every pair
// of match.
func (s Scrape) All(name string, match map[string]string) []Sample { return s.matching(name, match) }

func (s Scrape) matching(name string, match map[string]string) []Sample {
	var out []Sample
	for _, smp := range s.list {
		if smp.Name != name {
			continue
		}
		ok := true
		for k, want := range match {
			if smp.Labels[k] != want {
				ok = false
			}
		}
		if ok {
			out = append(out, smp)
		}
	}
	return out
}
