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

// Add keeps err, if any, as a problem: each of the errors an errors.Join
// (or another Problems' owner) holds becomes one, so that a message listing
// them reads one problem at a time.
func (p *Problems) Add(err error) {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		*p = append(*p, joined.Unwrap()...)
	} else if err != nil {
		*p = append(*p, err)
	}
}
