package annotations

import (
	"errors"
	"fmt"
	"testing"
)

func TestProblemsCheck(t *testing.T) {
	bad := errors.New("bad value")
	for _, tc := range []struct {
		name     string
		err      error
		wantOK   bool
		wantKept bool
	}{
		{"a value", nil, true, false},
		{"not set", ErrNotSet, false, false},
		{"not set, wrapped", fmt.Errorf("x: %w", ErrNotSet), false, false},
		{"invalid", bad, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p Problems
			if got := p.Check(tc.err); got != tc.wantOK {
				t.Errorf("Check(%v) = %v, want %v", tc.err, got, tc.wantOK)
			}
			if kept := len(p) == 1 && errors.Is(p[0], tc.err); kept != tc.wantKept || len(p) > 1 {
				t.Errorf("after Check(%v): problems %v, want kept=%v", tc.err, p, tc.wantKept)
			}
		})
	}
}

// Problems keeps every problem, in order, across reads.
func TestProblemsKeepsAllInOrder(t *testing.T) {
	var p Problems
	e1, e2 := errors.New("one"), errors.New("two")
	for _, err := range []error{e1, nil, ErrNotSet, e2} {
		p.Check(err)
	}
	if len(p) != 2 || !errors.Is(p[0], e1) || !errors.Is(p[1], e2) {
		t.Fatalf("problems %v, want [one two]", p)
	}
}

// Add keeps each error of a joined one, and nothing for nil.
func TestProblemsAdd(t *testing.T) {
	e1, e2, e3 := errors.New("one"), errors.New("two"), errors.New("three")
	var p Problems
	p.Add(nil)
	p.Add(errors.Join(e1, e2))
	p.Add(e3)
	if len(p) != 3 || p[0] != e1 || p[1] != e2 || p[2] != e3 { //nolint:errorlint // identity, not a match: Add must keep each error itself, not the joined one
		t.Fatalf("problems %v, want [one two three]", p)
	}
}
