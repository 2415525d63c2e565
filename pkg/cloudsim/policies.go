package cloudsim

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// AttachCAMPolicy attaches a Tencent CAM policy document to subject (a
// SecretId, or role/<RoleName>). A subject with no policy has full access;
// one with policies may call only what they allow (tencent/cam.go).
func (s *Sim) AttachCAMPolicy(subject string, doc []byte) error {
	return s.tencent.AttachPolicy(subject, doc)
}

// DetachCAMPolicies removes every CAM policy of subject: full access again.
func (s *Sim) DetachCAMPolicies(subject string) error { return s.tencent.DetachPolicies(subject) }

// AttachCAMPolicy attaches a Tencent CAM policy document to subject.
func (c *AdminClient) AttachCAMPolicy(ctx context.Context, subject string, doc []byte) error {
	return c.do(ctx, http.MethodPost, "tencent/policies/"+subject, tencent.PolicyBody{Policy: json.RawMessage(doc)}, nil)
}

// DetachCAMPolicies removes every CAM policy of subject.
func (c *AdminClient) DetachCAMPolicies(ctx context.Context, subject string) error {
	return c.do(ctx, http.MethodDelete, "tencent/policies/"+subject, nil, nil)
}

// CAMPolicies lists the attached CAM policies by subject.
func (c *AdminClient) CAMPolicies(ctx context.Context) (map[string][]json.RawMessage, error) {
	var out map[string][]json.RawMessage
	err := c.do(ctx, http.MethodGet, "tencent/policies", nil, &out)
	return out, err
}
