package engine

import (
	"bytes"
	"fmt"
	"io"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"

	"github.com/inferscale/inferscale/shared/signal"
)

// WriteOpenMetrics writes a history of scrapes (each pod's signal at its
// ScrapeTime, in time order) as one OpenMetrics exposition with sample
// timestamps, ready for `promtool tsdb create-blocks-from openmetrics`.
// The metric names are WritePrometheus's; every sample gets the labels a
// Prometheus scrape attaches — namespace and pod from the scrape, plus
// target (job, instance, ...) — and each family is written once, as
// OpenMetrics requires.
func WriteOpenMetrics(w io.Writer, scrapes []*signal.Pod, modelName string, target map[string]string) error {
	families := map[string]*dto.MetricFamily{}
	for _, p := range scrapes {
		if p.ScrapeTime.IsZero() {
			return fmt.Errorf("openmetrics: scrape of %s has no time", p.Name)
		}
		var text bytes.Buffer
		if err := WritePrometheus(&text, p, modelName); err != nil {
			return err
		}
		parser := expfmt.NewTextParser(model.LegacyValidation)
		got, err := parser.TextToMetricFamilies(&text)
		if err != nil {
			return fmt.Errorf("openmetrics: re-reading the scrape of %s: %w", p.Name, err)
		}
		labels := map[string]string{"namespace": p.Namespace, "pod": p.Name}
		for k, v := range target {
			labels[k] = v
		}
		ts := proto.Int64(p.ScrapeTime.UnixMilli())
		for name, f := range got {
			all := families[name]
			if all == nil {
				all = &dto.MetricFamily{Name: f.Name, Help: f.Help, Type: f.Type}
				families[name] = all
			}
			for _, m := range f.Metric {
				m.Label = withLabels(m.Label, labels)
				m.TimestampMs = ts
				all.Metric = append(all.Metric, m)
			}
		}
	}
	names := make([]string, 0, len(families))
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := expfmt.MetricFamilyToOpenMetrics(w, families[n]); err != nil {
			return fmt.Errorf("openmetrics: writing %s: %w", n, err)
		}
	}
	if _, err := expfmt.FinalizeOpenMetrics(w); err != nil {
		return fmt.Errorf("openmetrics: %w", err)
	}
	return nil
}

// withLabels sets the given labels on a metric's (replacing same-named
// ones), sorted by name.
func withLabels(have []*dto.LabelPair, set map[string]string) []*dto.LabelPair {
	merged := map[string]string{}
	for _, l := range have {
		merged[l.GetName()] = l.GetValue()
	}
	for k, v := range set {
		merged[k] = v
	}
	keys := make([]string, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*dto.LabelPair, len(keys))
	for i, k := range keys {
		out[i] = &dto.LabelPair{Name: proto.String(k), Value: proto.String(merged[k])}
	}
	return out
}
