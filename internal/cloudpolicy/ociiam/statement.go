// Package ociiam is OCI IAM as far as ccmkit uses it: policy statements,
// dynamic-group matching rules, and the table of the permissions each OCI
// API operation needs (permissions.go), from the OCI policy reference.
//
// Grammar source: "Policy Syntax"
// (https://docs.oracle.com/en-us/iaas/Content/Identity/Concepts/policysyntax.htm):
//
//	Allow <subject> to <verb> <resource-type> in <location> [where <conditions>]
//
// What is evaluated:
//   - subject: group <name>[, <name>...], dynamic-group <name>[, ...],
//     any-user;
//   - verb: inspect < read < use < manage, each granting the permissions
//     the reference lists for the resource type, cumulatively;
//   - resource-type: an individual type, a family (virtual-network-family,
//     instance-family) or all-resources;
//   - location: tenancy, compartment <name>, compartment id <ocid>
//     (compartments are flat here: no nesting, so no inheritance);
//   - conditions: only request.permission = '<PERMISSION>', alone or in
//     any {...} / all {...}, which narrows what the statement grants.
//
// Anything else (deny statements, endorse/admit, other condition
// variables) is refused by Parse rather than silently ignored.
package ociiam

import (
	"bufio"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Verb is a policy verb. The order is the documented cumulative order.
type Verb int

// The verbs, least first.
const (
	Inspect Verb = iota + 1
	Read
	Use
	Manage
)

var verbNames = map[string]Verb{"inspect": Inspect, "read": Read, "use": Use, "manage": Manage}

func (v Verb) String() string {
	for n, x := range verbNames {
		if x == v {
			return n
		}
	}
	return fmt.Sprintf("verb(%d)", int(v))
}

// SubjectKind is who a statement is about.
type SubjectKind string

// The subject kinds evaluated.
const (
	Group        SubjectKind = "group"
	DynamicGroup SubjectKind = "dynamic-group"
	AnyUser      SubjectKind = "any-user"
)

// Location is where a statement applies.
type Location struct {
	Tenancy         bool
	CompartmentName string
	CompartmentID   string
}

func (l Location) String() string {
	switch {
	case l.Tenancy:
		return "tenancy"
	case l.CompartmentID != "":
		return "compartment id " + l.CompartmentID
	}
	return "compartment " + l.CompartmentName
}

// Statement is one parsed Allow statement.
type Statement struct {
	Text         string
	Subject      SubjectKind
	Names        []string // group or dynamic-group names
	Verb         Verb
	ResourceType string
	Location     Location
	// OnlyPermissions, when set, narrows the statement to these
	// permissions (a where request.permission condition).
	OnlyPermissions []string
}

// Parse parses a policy: one statement per line; blank lines and lines
// starting with # are ignored. Every problem is reported at once, with
// its line number.
func Parse(text string) ([]Statement, error) {
	var out []Statement
	var errs []error
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		st, err := ParseStatement(line)
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", n, err))
			continue
		}
		out = append(out, st)
	}
	return out, errors.Join(errs...)
}

// ParseStatement parses one Allow statement.
func ParseStatement(s string) (Statement, error) {
	st := Statement{Text: strings.TrimSpace(s)}
	bad := func(format string, args ...any) (Statement, error) {
		return Statement{}, fmt.Errorf("statement %q: %s", st.Text, fmt.Sprintf(format, args...))
	}
	rest, cond, _ := cutWord(st.Text, "where")
	words := strings.Fields(rest)
	if len(words) == 0 || !strings.EqualFold(words[0], "allow") {
		return bad("must start with Allow (deny, endorse and admit statements are not evaluated)")
	}
	words = words[1:]
	if len(words) == 0 {
		return bad("no subject")
	}
	switch kind := SubjectKind(strings.ToLower(words[0])); kind {
	case AnyUser:
		st.Subject, words = AnyUser, words[1:]
	case Group, DynamicGroup:
		st.Subject, words = kind, words[1:]
		for len(words) > 0 && !strings.EqualFold(words[0], "to") {
			for _, n := range strings.Split(words[0], ",") {
				if n != "" {
					st.Names = append(st.Names, n)
				}
			}
			words = words[1:]
		}
		if len(st.Names) == 0 {
			return bad("%s names no %s", kind, kind)
		}
	default:
		return bad("subject %q is not group, dynamic-group or any-user", words[0])
	}
	if len(words) < 5 || !strings.EqualFold(words[0], "to") || !strings.EqualFold(words[3], "in") {
		return bad("want `to <verb> <resource-type> in <location>`")
	}
	v, ok := verbNames[strings.ToLower(words[1])]
	if !ok {
		return bad("verb %q is not inspect, read, use or manage", words[1])
	}
	st.Verb = v
	st.ResourceType = strings.ToLower(words[2])
	if !KnownResourceType(st.ResourceType) {
		return bad("resource-type %q is not one this table knows (%s)", words[2], strings.Join(ResourceTypes(), ", "))
	}
	loc := words[4:]
	switch {
	case len(loc) == 1 && strings.EqualFold(loc[0], "tenancy"):
		st.Location.Tenancy = true
	case len(loc) == 3 && strings.EqualFold(loc[0], "compartment") && strings.EqualFold(loc[1], "id"):
		st.Location.CompartmentID = loc[2]
	case len(loc) == 2 && strings.EqualFold(loc[0], "compartment"):
		st.Location.CompartmentName = loc[1]
	default:
		return bad("location %q is not tenancy, compartment <name> or compartment id <ocid>", strings.Join(loc, " "))
	}
	if cond != "" {
		perms, err := parsePermissionCondition(cond)
		if err != nil {
			return bad("%v", err)
		}
		st.OnlyPermissions = perms
	}
	return st, nil
}

// cutWord cuts s at the first whole word w (case-insensitive).
func cutWord(s, w string) (before, after string, found bool) {
	j := strings.Index(strings.ToLower(s), " "+w+" ")
	if j < 0 {
		return s, "", false
	}
	return strings.TrimSpace(s[:j]), strings.TrimSpace(s[j+len(w)+2:]), true
}

// parsePermissionCondition parses request.permission = 'X', or any/all
// {request.permission = 'X', ...} (with all, every listed permission must
// be the same for a request to match, so only one is meaningful; it is
// accepted as written).
func parsePermissionCondition(c string) ([]string, error) {
	c = strings.TrimSpace(c)
	lower := strings.ToLower(c)
	if strings.HasPrefix(lower, "any") || strings.HasPrefix(lower, "all") {
		body := strings.TrimSpace(c[3:])
		if !strings.HasPrefix(body, "{") || !strings.HasSuffix(body, "}") {
			return nil, errors.New("condition: want any {...} or all {...}")
		}
		c = body[1 : len(body)-1]
	}
	var out []string
	for part := range strings.SplitSeq(c, ",") {
		lhs, rhs, ok := strings.Cut(part, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(lhs), "request.permission") {
			return nil, fmt.Errorf("condition %q: only request.permission = '<PERMISSION>' is evaluated", strings.TrimSpace(part))
		}
		p := strings.Trim(strings.TrimSpace(rhs), "'\"")
		if !KnownPermission(p) {
			return nil, fmt.Errorf("condition: permission %q is not one this table knows", p)
		}
		out = append(out, p)
	}
	return out, nil
}

// Grants reports whether the statement grants permission perm (ignoring
// subject and location).
func (st Statement) Grants(perm string) bool {
	if len(st.OnlyPermissions) > 0 && !slices.Contains(st.OnlyPermissions, perm) {
		return false
	}
	return slices.Contains(VerbPermissions(st.ResourceType, st.Verb), perm)
}

// Principal is who makes a request, as IAM sees it.
type Principal struct {
	// Tenancy is the principal's tenancy OCID.
	Tenancy string
	// User is the user OCID of an API-key caller ("" for an instance).
	User string
	// InstanceID and CompartmentID identify an instance principal.
	InstanceID, CompartmentID string
}

// Subjects is what a principal is, for matching statements: the names of
// the groups its user belongs to and of the dynamic groups it matches.
type Subjects struct {
	Groups, DynamicGroups []string
}

func (st Statement) appliesTo(s Subjects) bool {
	switch st.Subject {
	case AnyUser:
		return true
	case Group:
		return slices.ContainsFunc(st.Names, func(n string) bool { return containsFold(s.Groups, n) })
	case DynamicGroup:
		return slices.ContainsFunc(st.Names, func(n string) bool { return containsFold(s.DynamicGroups, n) })
	}
	return false
}

func containsFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) })
}

// Target is where a request acts: the compartment of the resource (or of
// the list or create), when known. Compartments resolve names.
type Target struct {
	CompartmentID string // "": unknown, the location is not evaluated
	// NameOf returns a compartment's name ("" when it has none).
	NameOf func(compartmentID string) string
}

func (st Statement) appliesIn(t Target) bool {
	switch {
	case st.Location.Tenancy, t.CompartmentID == "":
		return true
	case st.Location.CompartmentID != "":
		return st.Location.CompartmentID == t.CompartmentID
	}
	return t.NameOf != nil && strings.EqualFold(t.NameOf(t.CompartmentID), st.Location.CompartmentName)
}

// Missing returns the permissions of need that no statement grants
// subjects in target, in need's order: none means the request is allowed.
func Missing(statements []Statement, s Subjects, t Target, need []string) []string {
	var out []string
	for _, p := range need {
		if !slices.ContainsFunc(statements, func(st Statement) bool { return st.appliesTo(s) && st.appliesIn(t) && st.Grants(p) }) {
			out = append(out, p)
		}
	}
	return out
}
