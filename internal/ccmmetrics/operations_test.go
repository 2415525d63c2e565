package ccmmetrics

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"
)

// TestOpOneTag checks that one Op value is what the three readers see:
// the error's prefix, the log line's op key and the metrics' op label.
func TestOpOneTag(t *testing.T) {
	const op Op = "testops.Ensure"
	var logged []string
	logger := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})

	for _, tc := range []struct {
		name   string
		err    error
		result string
	}{
		{"success", nil, "ok"},
		{"failure", errors.New("boom"), "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			labels := map[string]string{"op": string(op), "result": tc.result}
			before, err := Sum("ccmkit_provider_operations_total", labels)
			if err != nil {
				t.Fatal(err)
			}
			run := func() (err error) {
				ctx, done := op.Start(klog.NewContext(context.Background(), logger))
				defer done(&err)
				klog.FromContext(ctx).Info("Creating load balancer")
				return tc.err
			}
			if err := run(); !errors.Is(err, tc.err) {
				t.Fatalf("run returned %v, want %v", err, tc.err)
			}
			after, err := Sum("ccmkit_provider_operations_total", labels)
			if err != nil {
				t.Fatal(err)
			}
			if after-before != 1 {
				t.Errorf("ccmkit_provider_operations_total%v went from %v to %v, want +1", labels, before, after)
			}
			if n, _ := Sum("ccmkit_provider_operation_duration_seconds", map[string]string{"op": string(op)}); n == 0 {
				t.Error("no duration observed")
			}
			if last := logged[len(logged)-1]; !strings.Contains(last, `"op"="testops.Ensure"`) {
				t.Errorf("log line %s has no op key", last)
			}
		})
	}

	err := op.Errorf("Service %s: %w", "ns/a", context.Canceled)
	if got, want := err.Error(), "testops.Ensure: Service ns/a: context canceled"; got != want {
		t.Errorf("Errorf = %q, want %q", got, want)
	}
	if !errors.Is(err, context.Canceled) {
		t.Error("Errorf does not wrap its cause")
	}
}
