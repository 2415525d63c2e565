// Package annotations declares every Service annotation the
// cloud-controller-manager reads or writes, as typed Names with parsing
// helpers.
//
// Each constant in names.go documents itself: a description, then "Type:",
// "Default:" and "Providers:" lines (and "Read-only:" for annotations the
// CCM writes). docs/annotations.md is generated from those comments by
// ./gen, and a test fails when it is stale, so the reference cannot drift
// from the code.
//
// Parsing rules shared by every helper: surrounding whitespace is trimmed,
// an absent or empty annotation is ErrNotSet (the caller applies the
// default), and an unparsable value is an *InvalidError that names the
// annotation and quotes the value, because that error becomes the Warning
// Event a user reads on the Service.
package annotations

//go:generate go run ./gen -o ../../docs/annotations.md

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Name is the key of a Service annotation.
type Name string

// ErrNotSet is returned by the FromService helpers when the annotation is
// absent or empty.
var ErrNotSet = errors.New("annotation not set")

// InvalidError says that an annotation holds a value the CCM cannot use.
type InvalidError struct {
	Name   Name
	Value  string
	Reason string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("annotation %s: invalid value %q: %s", e.Name, e.Value, e.Reason)
}

// String returns the annotation key.
func (n Name) String() string { return string(n) }

// Invalid returns the error for value, for checks the helpers cannot make
// themselves (ranges, formats, combinations).
func (n Name) Invalid(value, reasonFormat string, args ...any) error {
	return &InvalidError{Name: n, Value: value, Reason: fmt.Sprintf(reasonFormat, args...)}
}

// IsSet reports whether the Service carries a non-empty value.
func (n Name) IsSet(svc *corev1.Service) bool {
	_, err := n.StringFromService(svc)
	return err == nil
}

// StringFromService returns the trimmed value, or ErrNotSet.
func (n Name) StringFromService(svc *corev1.Service) (string, error) {
	if svc == nil {
		return "", ErrNotSet
	}
	v := strings.TrimSpace(svc.Annotations[string(n)])
	if v == "" {
		return "", ErrNotSet
	}
	return v, nil
}

// BoolFromService parses true/false (and the other spellings of
// strconv.ParseBool: 1, t, TRUE, 0, f, FALSE...).
func (n Name) BoolFromService(svc *corev1.Service) (bool, error) {
	v, err := n.StringFromService(svc)
	if err != nil {
		return false, err
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, n.Invalid(v, "must be true or false")
	}
	return b, nil
}

// IntFromService parses a decimal integer.
func (n Name) IntFromService(svc *corev1.Service) (int, error) {
	v, err := n.StringFromService(svc)
	if err != nil {
		return 0, err
	}
	i, err := strconv.Atoi(v)
	if err != nil {
		return 0, n.Invalid(v, "must be an integer")
	}
	return i, nil
}

// IntInRangeFromService parses a decimal integer in [min, max].
func (n Name) IntInRangeFromService(svc *corev1.Service, min, max int) (int, error) {
	i, err := n.IntFromService(svc)
	if err != nil {
		return 0, err
	}
	if i < min || i > max {
		return 0, n.Invalid(svc.Annotations[string(n)], "must be between %d and %d", min, max)
	}
	return i, nil
}

// DurationFromService parses a Go duration ("10s", "1m30s") or a plain
// number of seconds ("10"), the form cloud consoles use. Negative values
// are invalid.
func (n Name) DurationFromService(svc *corev1.Service) (time.Duration, error) {
	v, err := n.StringFromService(svc)
	if err != nil {
		return 0, err
	}
	var d time.Duration
	if secs, err := strconv.Atoi(v); err == nil {
		d = time.Duration(secs) * time.Second
	} else if d, err = time.ParseDuration(v); err != nil {
		return 0, n.Invalid(v, "must be a duration such as 10s or 2m, or a number of seconds")
	}
	if d < 0 {
		return 0, n.Invalid(v, "must not be negative")
	}
	return d, nil
}

// EnumFromService returns the allowed value that matches the annotation,
// ignoring case, so that "Private" reads as "private".
func (n Name) EnumFromService(svc *corev1.Service, allowed ...string) (string, error) {
	v, err := n.StringFromService(svc)
	if err != nil {
		return "", err
	}
	for _, a := range allowed {
		if strings.EqualFold(v, a) {
			return a, nil
		}
	}
	return "", n.Invalid(v, "must be one of %s", strings.Join(allowed, ", "))
}

// SelectorFromService parses a label selector in kubectl syntax, e.g.
// "pool=edge,zone in (a,b),!spot".
func (n Name) SelectorFromService(svc *corev1.Service) (labels.Selector, error) {
	v, err := n.StringFromService(svc)
	if err != nil {
		return nil, err
	}
	sel, err := labels.Parse(v)
	if err != nil {
		return nil, n.Invalid(v, "must be a label selector such as pool=edge,!spot: %v", err)
	}
	return sel, nil
}
