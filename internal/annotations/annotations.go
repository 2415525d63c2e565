// Package annotations declares every Service annotation the
// cloud-controller-manager reads or writes: a Name for a string-like one
// (ids, JSON, selectors), a typed descriptor (Bool, Int, Duration, Enum:
// typed.go) for the others, which carries its values and default.
//
// Each declaration documents itself: a description, then "Providers:"
// (and "Read-only:" for annotations the CCM writes); a Name's comment also
// gives "Type:" and "Default:", which a descriptor states itself.
// docs/annotations.md is generated from both by ./gen, and a test fails
// when it is stale, so the reference cannot drift from the code.
//
// Parsing rules shared by every helper: surrounding whitespace is trimmed,
// an absent or empty annotation is ErrNotSet (Value returns the
// descriptor's Default instead), and an unparsable value is an
// *InvalidError that names the annotation and quotes the value, because
// that error becomes the Warning Event a user reads on the Service.
package annotations

//go:generate go run ./gen -o ../../docs/annotations.md

import (
	"errors"
	"fmt"
	"strings"

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
