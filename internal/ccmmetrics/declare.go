// Package ccmmetrics declares the CCM's own metrics in one shape: named
// ccmkit_<subsystem>_<name>, ALPHA, and registered once on the legacy
// registry, which the CCM serves on its secure /metrics next to
// upstream's. cloudapi.go declares the cloud API metrics that every cloud's
// transport records with the same names and labels, so that dashboards
// and alerts need no change for another cloud.
package ccmmetrics

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const namespace = "ccmkit"

// Set is one subsystem's metrics, registered together on first use (a
// package calls Register where it starts recording, so that a binary that
// never uses the package serves none of them).
type Set struct {
	subsystem string
	once      sync.Once
	all       []metrics.Registerable
}

// NewSet starts the metrics of a subsystem, e.g. "routes".
func NewSet(subsystem string) *Set { return &Set{subsystem: subsystem} }

// Register registers every metric of the set; later calls do nothing.
func (s *Set) Register() {
	s.once.Do(func() { legacyregistry.MustRegister(s.all...) })
}

// opts are the options every metric of the set shares.
func (s *Set) opts(name, help string) metrics.KubeOpts {
	return metrics.KubeOpts{Namespace: namespace, Subsystem: s.subsystem, Name: name, Help: help, StabilityLevel: metrics.ALPHA}
}

func add[M metrics.Registerable](s *Set, m M) M {
	s.all = append(s.all, m)
	return m
}

// CounterVec declares a counter with labels.
func (s *Set) CounterVec(name, help string, labels ...string) *metrics.CounterVec {
	o := metrics.CounterOpts(s.opts(name, help))
	return add(s, metrics.NewCounterVec(&o, labels))
}

// Counter declares a counter without labels.
func (s *Set) Counter(name, help string) *metrics.Counter {
	o := metrics.CounterOpts(s.opts(name, help))
	return add(s, metrics.NewCounter(&o))
}

// GaugeVec declares a gauge with labels.
func (s *Set) GaugeVec(name, help string, labels ...string) *metrics.GaugeVec {
	o := metrics.GaugeOpts(s.opts(name, help))
	return add(s, metrics.NewGaugeVec(&o, labels))
}

// Gauge declares a gauge without labels.
func (s *Set) Gauge(name, help string) *metrics.Gauge {
	o := metrics.GaugeOpts(s.opts(name, help))
	return add(s, metrics.NewGauge(&o))
}

// HistogramVec declares a histogram with labels.
func (s *Set) HistogramVec(name, help string, buckets []float64, labels ...string) *metrics.HistogramVec {
	o := s.opts(name, help)
	return add(s, metrics.NewHistogramVec(&metrics.HistogramOpts{Namespace: o.Namespace, Subsystem: o.Subsystem, Name: o.Name,
		Help: o.Help, Buckets: buckets, StabilityLevel: o.StabilityLevel}, labels))
}
