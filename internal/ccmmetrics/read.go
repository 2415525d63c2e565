package ccmmetrics

import (
	"fmt"

	"k8s.io/component-base/metrics/legacyregistry"
)

// Sum reads a metric from the legacy registry, for tests and checks: the
// sum over the series whose labels include every one given, of the
// counter's or gauge's value or the histogram's sample count. A metric
// not (yet) registered or without such a series sums to 0.
func Sum(name string, labels map[string]string) (float64, error) {
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		return 0, fmt.Errorf("gather metrics for %s: %w", name, err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum, nil
}
