package ociiam

import (
	"fmt"
	"strings"
)

// MatchingRule is a dynamic group's matching rule.
//
// Grammar source: "Writing Matching Rules to Define Dynamic Groups"
// (https://docs.oracle.com/en-us/iaas/Content/Identity/Tasks/managingdynamicgroups.htm):
//
//	ANY {instance.id = 'ocid1.instance...', instance.compartment.id = 'ocid1.compartment...'}
//	ALL {instance.compartment.id = '...', instance.id != '...'}
//	instance.compartment.id = '...'
//
// Evaluated: ANY/ALL (one level), = and !=, on instance.id and
// instance.compartment.id. Tags and resource.* rules are refused.
type MatchingRule struct {
	Text  string
	All   bool // ALL {...}; otherwise ANY (a single condition is both)
	Terms []ruleTerm
}

type ruleTerm struct {
	Attr  string // "instance.id" or "instance.compartment.id"
	Equal bool
	Value string
}

// ParseMatchingRule parses a matching rule.
func ParseMatchingRule(s string) (MatchingRule, error) {
	r := MatchingRule{Text: strings.TrimSpace(s)}
	body := r.Text
	upper := strings.ToUpper(body)
	switch {
	case strings.HasPrefix(upper, "ANY"), strings.HasPrefix(upper, "ALL"):
		r.All = strings.HasPrefix(upper, "ALL")
		body = strings.TrimSpace(body[3:])
		if !strings.HasPrefix(body, "{") || !strings.HasSuffix(body, "}") {
			return MatchingRule{}, fmt.Errorf("matching rule %q: want ANY {...} or ALL {...}", r.Text)
		}
		body = body[1 : len(body)-1]
	}
	for part := range strings.SplitSeq(body, ",") {
		t, err := parseTerm(part)
		if err != nil {
			return MatchingRule{}, fmt.Errorf("matching rule %q: %w", r.Text, err)
		}
		r.Terms = append(r.Terms, t)
	}
	return r, nil
}

func parseTerm(s string) (ruleTerm, error) {
	s = strings.TrimSpace(s)
	t := ruleTerm{Equal: true}
	lhs, rhs, ok := strings.Cut(s, "!=")
	if ok {
		t.Equal = false
	} else if lhs, rhs, ok = strings.Cut(s, "="); !ok {
		return ruleTerm{}, fmt.Errorf("condition %q: want <attribute> = '<value>'", s)
	}
	t.Attr = strings.ToLower(strings.TrimSpace(lhs))
	if t.Attr != "instance.id" && t.Attr != "instance.compartment.id" {
		return ruleTerm{}, fmt.Errorf("condition %q: only instance.id and instance.compartment.id are evaluated", s)
	}
	t.Value = strings.Trim(strings.TrimSpace(rhs), "'\"")
	if t.Value == "" {
		return ruleTerm{}, fmt.Errorf("condition %q: empty value", s)
	}
	return t, nil
}

// Matches reports whether an instance principal is in the dynamic group.
// A user principal (no InstanceID) never is.
func (r MatchingRule) Matches(p Principal) bool {
	if p.InstanceID == "" {
		return false
	}
	for _, t := range r.Terms {
		v := p.InstanceID
		if t.Attr == "instance.compartment.id" {
			v = p.CompartmentID
		}
		hit := (v == t.Value) == t.Equal
		if r.All && !hit {
			return false
		}
		if !r.All && hit {
			return true
		}
	}
	return r.All
}
