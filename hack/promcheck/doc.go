// Package promcheck checks the PromQL of the Helm chart's Grafana dashboard
// and PrometheusRule against the metrics docs/metrics.md documents: every
// query must parse, and every metric and label it names must be listed
// there for that metric.
//
// It is a module of its own because the Prometheus parser's module
// (github.com/prometheus/prometheus) would raise the versions of a dozen
// modules the CCM itself builds with (grpc, otel, golang.org/x/net,
// client_golang…); here it changes nothing the CCM ships. `make unit`
// runs its tests.
package promcheck
