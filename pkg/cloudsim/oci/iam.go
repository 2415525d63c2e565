package oci

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/ccmkit/ccm/internal/cloudpolicy/ociiam"
	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// IAM: groups of users, dynamic groups of instances, policies of Allow
// statements, and compartment names for statements that name one.
// internal/cloudpolicy/ociiam says what of the grammar is evaluated and
// holds the table of the permissions each operation needs, from the OCI
// policy reference.
//
// A principal that is in no group and matches no dynamic group has full
// access: cloudsim's choice, so that existing users and tests, which never
// set IAM up, keep working. Any other principal may call an operation only
// when the statements of its groups grant every permission the operation
// needs in the compartment it acts in; otherwise OCI answers 404
// NotAuthorizedOrNotFound, the same answer as for a missing resource
// (API Errors, https://docs.oracle.com/en-us/iaas/Content/API/References/apierrors.htm:
// "NotAuthorizedOrNotFound ... Authorization failed or requested resource
// not found").

// IAMSeed sets IAM up (Options.IAM, and the admin API's parts).
type IAMSeed struct {
	// Groups: group name -> member user OCIDs.
	Groups map[string][]string `json:"groups,omitempty"`
	// DynamicGroups: dynamic group name -> matching rule.
	DynamicGroups map[string]string `json:"dynamicGroups,omitempty"`
	// Policies: policy name -> Allow statements.
	Policies map[string][]string `json:"policies,omitempty"`
	// CompartmentNames: compartment name -> OCID, for statements that
	// say "in compartment <name>".
	CompartmentNames map[string]string `json:"compartmentNames,omitempty"`
}

type iamStore struct {
	mu            sync.RWMutex
	groups        map[string][]string
	dynamicGroups map[string]ociiam.MatchingRule
	policies      map[string][]ociiam.Statement
	names         map[string]string // compartment name -> OCID
}

func newIAMStore() *iamStore {
	return &iamStore{groups: map[string][]string{}, dynamicGroups: map[string]ociiam.MatchingRule{},
		policies: map[string][]ociiam.Statement{}, names: map[string]string{}}
}

// apply validates the whole seed, then applies it (all or nothing).
// Entries replace those of the same name.
func (s *iamStore) apply(seed IAMSeed) error {
	rules := map[string]ociiam.MatchingRule{}
	for name, text := range seed.DynamicGroups {
		r, err := ociiam.ParseMatchingRule(text)
		if err != nil {
			return fmt.Errorf("%w: dynamic group %q: %v", core.ErrInvalid, name, err)
		}
		rules[name] = r
	}
	policies := map[string][]ociiam.Statement{}
	for name, lines := range seed.Policies {
		sts, err := ociiam.Parse(strings.Join(lines, "\n"))
		if err != nil {
			return fmt.Errorf("%w: policy %q: %v", core.ErrInvalid, name, err)
		}
		policies[name] = sts
	}
	for name, members := range seed.Groups {
		for _, u := range members {
			if !core.ValidOCID(u, "user") {
				return fmt.Errorf("%w: group %q: member %q is not a user OCID", core.ErrInvalid, name, u)
			}
		}
	}
	for name, id := range seed.CompartmentNames {
		if !validCompartment(id) {
			return fmt.Errorf("%w: compartment name %q: %q is not a compartment or tenancy OCID", core.ErrInvalid, name, id)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.Copy(s.dynamicGroups, rules)
	maps.Copy(s.policies, policies)
	for name, members := range seed.Groups {
		s.groups[name] = slices.Clone(members)
	}
	maps.Copy(s.names, seed.CompartmentNames)
	return nil
}

// remove deletes a group, dynamic group or policy (kind: "groups",
// "dynamicGroups", "policies") by name.
func (s *iamStore) remove(kind, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ok bool
	switch kind {
	case "groups":
		_, ok = s.groups[name]
		delete(s.groups, name)
	case "dynamicGroups":
		_, ok = s.dynamicGroups[name]
		delete(s.dynamicGroups, name)
	case "policies":
		_, ok = s.policies[name]
		delete(s.policies, name)
	}
	if !ok {
		return fmt.Errorf("%w: no %s named %q", core.ErrNotFound, kind, name)
	}
	return nil
}

func (s *iamStore) state() IAMSeed {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := IAMSeed{Groups: map[string][]string{}, DynamicGroups: map[string]string{}, Policies: map[string][]string{},
		CompartmentNames: maps.Clone(s.names)}
	for n, m := range s.groups {
		out.Groups[n] = slices.Clone(m)
	}
	for n, r := range s.dynamicGroups {
		out.DynamicGroups[n] = r.Text
	}
	for n, sts := range s.policies {
		for _, st := range sts {
			out.Policies[n] = append(out.Policies[n], st.Text)
		}
	}
	return out
}

// subjects is what p is a member of; governed is false when p is in no
// group and matches no dynamic group (full access).
func (s *iamStore) subjects(p Principal) (subj ociiam.Subjects, statements []ociiam.Statement, governed bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for name, members := range s.groups {
		if p.User != "" && slices.Contains(members, p.User) {
			subj.Groups = append(subj.Groups, name)
		}
	}
	for name, rule := range s.dynamicGroups {
		if rule.Matches(p) {
			subj.DynamicGroups = append(subj.DynamicGroups, name)
		}
	}
	if len(subj.Groups) == 0 && len(subj.DynamicGroups) == 0 {
		return subj, nil, false
	}
	for _, name := range slices.Sorted(maps.Keys(s.policies)) {
		statements = append(statements, s.policies[name]...)
	}
	return subj, statements, true
}

func (s *iamStore) nameOf(compartmentID string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for name, id := range s.names {
		if id == compartmentID {
			return name
		}
	}
	return ""
}

// authorize decides one call of op by p; nil means allowed. missing, for
// the call log, names the permissions no statement granted.
func (d *Dialect) authorize(r *http.Request, body []byte, op string, p Principal) (missing []string, _ *Error) {
	subj, statements, governed := d.iam.subjects(p)
	if !governed {
		return nil, nil
	}
	spec, ok := ociiam.LookupOperation(op)
	if !ok {
		// Every route has an entry (a test checks), so this is an
		// unknown path, which answers 404 anyway.
		return nil, nil
	}
	need := spec.For(r.URL.Query().Get)
	target := ociiam.Target{CompartmentID: d.targetCompartment(r, body), NameOf: d.iam.nameOf}
	if missing = ociiam.Missing(statements, subj, target, need); len(missing) == 0 {
		return nil, nil
	}
	return missing, Errorf(http.StatusNotFound, CodeNotAuthorizedOrNotFound, "Authorization failed or requested resource not found.")
}

// SeedIAM adds groups, dynamic groups, policies and compartment names, all
// or none; entries replace those of the same name.
func (d *Dialect) SeedIAM(seed IAMSeed) error { return d.iam.apply(seed) }

// IAM returns the IAM setup.
func (d *Dialect) IAM() IAMSeed { return d.iam.state() }

// RemoveIAM deletes a group, dynamic group or policy by name (kind:
// "groups", "dynamicGroups", "policies").
func (d *Dialect) RemoveIAM(kind, name string) error { return d.iam.remove(kind, name) }

// registerIAMAdmin adds:
//
//	GET    /admin/oci/iam                        the IAM setup (IAMSeed)
//	POST   /admin/oci/iam                        add to it (IAMSeed; same names replace)
//	DELETE /admin/oci/iam/groups/{name}          remove a group
//	DELETE /admin/oci/iam/dynamicGroups/{name}   remove a dynamic group
//	DELETE /admin/oci/iam/policies/{name}        remove a policy
func (d *Dialect) registerIAMAdmin(c *core.Core) {
	h := c.HandleAdminFunc
	h("GET /admin/oci/iam", func(*http.Request) (int, any, error) { return http.StatusOK, d.IAM(), nil })
	h("POST /admin/oci/iam", func(r *http.Request) (int, any, error) {
		var seed IAMSeed
		if err := core.DecodeAdmin(r, &seed); err != nil {
			return 0, nil, err
		}
		if err := d.SeedIAM(seed); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, d.IAM(), nil
	})
	h("DELETE /admin/oci/iam/{kind}/{name}", func(r *http.Request) (int, any, error) {
		kind := r.PathValue("kind")
		if kind != "groups" && kind != "dynamicGroups" && kind != "policies" {
			return 0, nil, fmt.Errorf("%w: %q is not groups, dynamicGroups or policies", core.ErrNotFound, kind)
		}
		return http.StatusNoContent, nil, d.RemoveIAM(kind, r.PathValue("name"))
	})
}
