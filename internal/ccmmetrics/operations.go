package ccmmetrics

import (
	"context"
	"fmt"
	"time"

	"k8s.io/klog/v2"
)

// Op is the tag of one operation behind a cloudprovider interface method,
// "<package>.<Method>" (clbops.Ensure, lbops.Delete, routeops.Create). One
// string serves three readers, as hcloud's `const op` does: it prefixes the
// operation's errors, it is the "op" key of its log lines, and it is the op
// label of the operations metrics. So an error in an Event, a log line and a
// dashboard panel about the same failure all name it the same way.
type Op string

// The operations metrics. The op label is bounded: our own constants.
var (
	operations = NewSet("provider")

	opRuns = operations.CounterVec("operations_total",
		"Operations behind the cloudprovider interface methods, by op (the tag their errors and log lines carry) and result (ok, error).",
		"op", "result")
	opDuration = operations.HistogramVec("operation_duration_seconds",
		"How long an operation took, its cloud calls and waits included.",
		[]float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		"op")
)

// Start begins one run of the operation. The returned context carries a
// logger with the op key (klog.FromContext), and done, deferred with the
// address of the method's named error, counts the run's result and time:
//
//	ctx, done := op.Start(ctx)
//	defer done(&err)
func (o Op) Start(ctx context.Context) (context.Context, func(*error)) {
	operations.Register()
	start := time.Now()
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("op", string(o)))
	return ctx, func(errp *error) {
		result := "ok"
		if errp != nil && *errp != nil {
			result = "error"
		}
		opRuns.WithLabelValues(string(o), result).Inc()
		opDuration.WithLabelValues(string(o)).Observe(time.Since(start).Seconds())
	}
}

// Errorf returns an error prefixed with the tag: "clbops.Ensure: …".
func (o Op) Errorf(format string, args ...any) error {
	return fmt.Errorf(string(o)+": "+format, args...)
}

// Run runs f as one run of the operation (Start), and prefixes its error
// with the tag. f's value is returned with its error, for the methods
// whose answer on error still matters (InstanceExists says true).
func Run[T any](ctx context.Context, op Op, f func(context.Context) (T, error)) (v T, err error) {
	ctx, done := op.Start(ctx)
	defer done(&err)
	if v, err = f(ctx); err != nil {
		err = op.Errorf("%w", err)
	}
	return v, err
}
