package tencent

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/ccmkit/ccm/internal/cloudpolicy/cam"
	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// camStore holds the CAM policies attached to each subject (a SecretId, or
// role/<RoleName> for temporary credentials; see subjectOf).
//
// A subject with no policy attached has full access: cloudsim's choice, so
// that existing users and tests, which never attach one, keep working. A
// subject with policies is authorized as CAM does: allowed when some allow
// statement matches the action and no deny statement does
// (internal/cloudpolicy/cam says what of the grammar is evaluated).
type camStore struct {
	mu       sync.RWMutex
	policies map[string][]*cam.Policy
}

func newCAMStore() *camStore { return &camStore{policies: map[string][]*cam.Policy{}} }

// codeUnauthorized is the common error code of a call CAM refuses (API
// 3.0 "Common Error Codes": "AuthFailure.UnauthorizedOperation: The request
// is not authorized through CAM").
const codeUnauthorized = "AuthFailure.UnauthorizedOperation"

// authorize checks subject's policies for service:action.
func (s *camStore) authorize(subject, service, action string) *Error {
	s.mu.RLock()
	policies, governed := s.policies[subject]
	s.mu.RUnlock()
	if !governed {
		return nil
	}
	name := service + ":" + action
	if cam.Decide(policies, name, "*").Allowed {
		return nil
	}
	// The message's shape is the real one's, as the SDKs surface it
	// (TencentCloud/tencentcloud-sdk-java issue 78): a general sentence,
	// then the operation and the resource.
	return Errorf(codeUnauthorized,
		"You are not authorized to perform this operation. Check your CAM policies, and ensure that you are using the correct access keys. "+
			"you are not authorized to perform operation (%s)\nresource (*) has no permission", name)
}

// attach adds a policy document to subject's policies.
func (s *camStore) attach(subject string, doc []byte) error {
	if strings.TrimSpace(subject) == "" {
		return fmt.Errorf("%w: a policy needs a subject (a SecretId, or role/<RoleName>)", core.ErrInvalid)
	}
	p, err := cam.Parse(doc)
	if err != nil {
		return fmt.Errorf("%w: %v", core.ErrInvalid, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.policies[subject] = append(s.policies[subject], p)
	return nil
}

// detach removes every policy of subject: it has full access again.
func (s *camStore) detach(subject string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.policies[subject]
	delete(s.policies, subject)
	return ok
}

// list returns every subject's policies as documents.
func (s *camStore) list() map[string][]json.RawMessage {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string][]json.RawMessage{}
	for _, subject := range slices.Sorted(maps.Keys(s.policies)) {
		for _, p := range s.policies[subject] {
			out[subject] = append(out[subject], p.JSON())
		}
	}
	return out
}

// AttachPolicy attaches a CAM policy document to subject (a SecretId, or
// role/<RoleName>); a subject's first policy ends its full access.
func (d *Dialect) AttachPolicy(subject string, doc []byte) error { return d.cam.attach(subject, doc) }

// DetachPolicies removes every policy of subject, which then has full
// access again.
func (d *Dialect) DetachPolicies(subject string) error {
	if !d.cam.detach(subject) {
		return fmt.Errorf("%w: no policy is attached to %q", core.ErrNotFound, subject)
	}
	return nil
}

// Policies lists the attached policies by subject.
func (d *Dialect) Policies() map[string][]json.RawMessage { return d.cam.list() }

// PolicyBody is the body of POST /admin/tencent/policies/{subject}.
type PolicyBody struct {
	Policy json.RawMessage `json:"policy"` // a CAM policy document
}

// registerCAMAdmin adds the admin routes of CAM policies:
//
//	GET    /admin/tencent/policies            every subject's policies
//	POST   /admin/tencent/policies/{subject}  attach one (PolicyBody)
//	DELETE /admin/tencent/policies/{subject}  detach all: full access again
func (d *Dialect) registerCAMAdmin(c *core.Core) {
	const base = "/admin/tencent/policies"
	h := c.HandleAdminFunc
	h("GET "+base, func(*http.Request) (int, any, error) { return http.StatusOK, d.Policies(), nil })
	h("POST "+base+"/{subject...}", func(r *http.Request) (int, any, error) {
		var body PolicyBody
		if err := core.DecodeAdmin(r, &body); err != nil {
			return 0, nil, err
		}
		if len(body.Policy) == 0 {
			return 0, nil, errors.Join(core.ErrInvalid, errors.New("policy is missing"))
		}
		return http.StatusCreated, nil, d.AttachPolicy(r.PathValue("subject"), body.Policy)
	})
	h("DELETE "+base+"/{subject...}", func(r *http.Request) (int, any, error) {
		return http.StatusNoContent, nil, d.DetachPolicies(r.PathValue("subject"))
	})
}
