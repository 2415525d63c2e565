// Package cam parses and evaluates Tencent Cloud CAM policies (policy
// syntax version 2.0) as far as ccmkit uses them: statements with an
// effect, actions and resources; deny wins over allow.
//
// Syntax source: CAM "Element Reference" (https://www.tencentcloud.com/document/product/598/10603:
// "version ... the only available value is 2.0"; principal "can only be used
// in trust policies for roles") and "Policy Syntax" (product/598/10604):
//
//	{"version":"2.0","statement":[{"effect":"allow","action":["clb:CreateLoadBalancer"],"resource":["*"]}]}
//
// What is evaluated:
//   - effect allow|deny, deny winning over any allow;
//   - action "service:Action", with "*" wildcards anywhere ("clb:Describe*",
//     "clb:*", "*"), and the older "name/service:Action" form; matching is
//     case-insensitive (cloudsim's choice: CAM documents no case rule);
//   - resource "*", or a six-segment qcs resource
//     ("qcs::clb:ap-guangzhou:uin/100000000001:clb/lb-xxxx"), which matches
//     a call when its service segment is the action's service or empty.
//
// What is not evaluated, and therefore refused by Parse rather than
// silently ignored: "condition" blocks and "principal" (a role's trust
// policy, not a permission policy). Resource-level authorization (which
// CLB a call touches) is not evaluated: a qcs resource grants the action on
// every resource of its service.
package cam

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Version is the only policy syntax version CAM accepts.
const Version = "2.0"

// Effect is a statement's effect.
type Effect string

// The two effects.
const (
	Allow Effect = "allow"
	Deny  Effect = "deny"
)

// Policy is a parsed CAM policy.
type Policy struct {
	Version    string
	Statements []Statement
}

// Statement is one statement of a policy.
type Statement struct {
	Effect    Effect
	Actions   []string // as written: "clb:CreateListener", "clb:Describe*", "*"
	Resources []string // as written: "*" or qcs resources
}

// stringOrList is a JSON string or a list of strings, as CAM accepts
// either for action and resource.
type stringOrList []string

func (s *stringOrList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("must be a string or a list of strings")
	}
	*s = many
	return nil
}

type rawStatement struct {
	Effect    string          `json:"effect"`
	Action    stringOrList    `json:"action"`
	Resource  stringOrList    `json:"resource"`
	Condition json.RawMessage `json:"condition"`
	Principal json.RawMessage `json:"principal"`
}

type rawPolicy struct {
	Version   string         `json:"version"`
	Statement []rawStatement `json:"statement"`
}

// Parse parses a policy document. Every problem is reported at once,
// naming the statement it is in.
func Parse(doc []byte) (*Policy, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	var raw rawPolicy
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("CAM policy: %w", err)
	}
	var errs []error
	if raw.Version != Version {
		errs = append(errs, fmt.Errorf("version is %q, want %q", raw.Version, Version))
	}
	if len(raw.Statement) == 0 {
		errs = append(errs, errors.New("statement is empty"))
	}
	p := &Policy{Version: raw.Version}
	for i, rs := range raw.Statement {
		where := fmt.Sprintf("statement[%d]", i)
		st := Statement{Effect: Effect(strings.ToLower(rs.Effect)), Actions: rs.Action, Resources: rs.Resource}
		if st.Effect != Allow && st.Effect != Deny {
			errs = append(errs, fmt.Errorf("%s: effect is %q, want allow or deny", where, rs.Effect))
		}
		if len(st.Actions) == 0 {
			errs = append(errs, fmt.Errorf("%s: action is empty", where))
		}
		for _, a := range st.Actions {
			if err := checkAction(a); err != nil {
				errs = append(errs, fmt.Errorf("%s: action %q: %w", where, a, err))
			}
		}
		if len(st.Resources) == 0 {
			errs = append(errs, fmt.Errorf("%s: resource is empty (use \"*\" for every resource)", where))
		}
		for _, r := range st.Resources {
			if r != "*" && len(strings.Split(r, ":")) < 6 {
				errs = append(errs, fmt.Errorf("%s: resource %q is neither \"*\" nor qcs::<service>:<region>:<account>:<resource>", where, r))
			}
		}
		if len(rs.Condition) > 0 {
			errs = append(errs, fmt.Errorf("%s: condition is not evaluated here; remove it or grant without it", where))
		}
		if len(rs.Principal) > 0 {
			errs = append(errs, fmt.Errorf("%s: principal belongs to a role's trust policy, not to a permission policy", where))
		}
		p.Statements = append(p.Statements, st)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("CAM policy: %w", err)
	}
	return p, nil
}

func checkAction(a string) error {
	a = strings.TrimPrefix(a, "name/")
	if a == "*" {
		return nil
	}
	svc, act, ok := strings.Cut(a, ":")
	if !ok || svc == "" || act == "" {
		return errors.New(`want "service:Action" (wildcards allowed) or "*"`)
	}
	return nil
}

// Decision is the outcome of evaluating policies for one call.
type Decision struct {
	Allowed bool
	// DeniedBy is set when an explicit deny statement matched.
	DeniedBy *Statement
}

// Decide evaluates policies for action ("clb:CreateListener") on
// resource ("*" when the call's resource is not known): allowed when some
// allow statement matches and no deny statement does.
func Decide(policies []*Policy, action, resource string) Decision {
	var d Decision
	for _, p := range policies {
		for i := range p.Statements {
			st := &p.Statements[i]
			if !st.Matches(action, resource) {
				continue
			}
			if st.Effect == Deny {
				return Decision{DeniedBy: st}
			}
			d.Allowed = true
		}
	}
	return d
}

// Matches reports whether the statement covers action on resource.
func (st *Statement) Matches(action, resource string) bool {
	svc, _, _ := strings.Cut(action, ":")
	return slices.ContainsFunc(st.Actions, func(a string) bool { return Glob(strings.TrimPrefix(a, "name/"), action) }) &&
		slices.ContainsFunc(st.Resources, func(r string) bool { return resourceMatches(r, svc, resource) })
}

func resourceMatches(pattern, service, resource string) bool {
	if pattern == "*" || pattern == resource {
		return true
	}
	// qcs::<service>:<region>:<account>:<resource...>: only the service
	// segment is evaluated (see the package comment).
	parts := strings.SplitN(pattern, ":", 6)
	return len(parts) == 6 && (parts[2] == "" || parts[2] == "*" || strings.EqualFold(parts[2], service))
}

// Glob matches s against pattern, where "*" matches any run of
// characters, case-insensitively.
func Glob(pattern, s string) bool {
	pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// Actions lists the actions the policy allows as written (wildcards
// included), in order, without duplicates.
func (p *Policy) Actions() []string {
	var out []string
	for _, st := range p.Statements {
		if st.Effect != Allow {
			continue
		}
		for _, a := range st.Actions {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// Without returns a copy of the policy whose allow statements no longer
// name action (written exactly so): what a principal missing one
// permission has. Statements left without an action are dropped.
func (p *Policy) Without(action string) *Policy {
	out := &Policy{Version: p.Version}
	for _, st := range p.Statements {
		c := st
		if st.Effect == Allow {
			c.Actions = slices.DeleteFunc(slices.Clone(st.Actions), func(a string) bool { return strings.EqualFold(a, action) })
			if len(c.Actions) == 0 {
				continue
			}
		}
		out.Statements = append(out.Statements, c)
	}
	return out
}

// JSON renders the policy in CAM's syntax.
func (p *Policy) JSON() []byte {
	type st struct {
		Effect   string   `json:"effect"`
		Action   []string `json:"action"`
		Resource []string `json:"resource"`
	}
	doc := struct {
		Version   string `json:"version"`
		Statement []st   `json:"statement"`
	}{Version: p.Version}
	for _, s := range p.Statements {
		doc.Statement = append(doc.Statement, st{string(s.Effect), s.Actions, s.Resources})
	}
	b, _ := json.Marshal(doc)
	return b
}
