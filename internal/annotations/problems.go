package annotations

import "errors"

// Problems collects what is wrong with a Service's annotations while they
// are read, so that one pass reports every problem rather than the first.
//
//	var errs annotations.Problems
//	if v, err := annotations.X.BoolFromService(svc); errs.Check(err) {
//		use(v)
//	}
type Problems []error

// Check reports whether the read that returned err gave a value to use
// (err is nil). An unset annotation (ErrNotSet) is no value and no
// problem; any other error is kept.
func (p *Problems) Check(err error) bool {
	if err != nil && !errors.Is(err, ErrNotSet) {
		*p = append(*p, err)
	}
	return err == nil
}
