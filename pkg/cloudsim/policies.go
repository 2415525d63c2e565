package cloudsim

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/ccmkit/ccm/pkg/cloudsim/oci"
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

// OCIIAM is the OCI IAM setup: groups, dynamic groups, policies and
// compartment names (see oci.IAMSeed).
type OCIIAM = oci.IAMSeed

// SeedOCIIAM adds OCI groups, dynamic groups, policies and compartment
// names, all or none (same names replace). A principal in no group has
// full access; one in a group may call only what its statements grant.
func (s *Sim) SeedOCIIAM(seed oci.IAMSeed) error { return s.oci.SeedIAM(seed) }

// RemoveOCIIAM deletes an OCI group, dynamic group or policy (kind
// "groups", "dynamicGroups" or "policies") by name.
func (s *Sim) RemoveOCIIAM(kind, name string) error { return s.oci.RemoveIAM(kind, name) }

// SeedOCIIAM adds OCI groups, dynamic groups, policies and compartment
// names, and returns the whole IAM setup.
func (c *AdminClient) SeedOCIIAM(ctx context.Context, seed oci.IAMSeed) (oci.IAMSeed, error) {
	var out oci.IAMSeed
	err := c.do(ctx, http.MethodPost, "oci/iam", seed, &out)
	return out, err
}

// RemoveOCIIAM deletes an OCI group, dynamic group or policy by name.
func (c *AdminClient) RemoveOCIIAM(ctx context.Context, kind, name string) error {
	return c.do(ctx, http.MethodDelete, "oci/iam/"+url.PathEscape(kind)+"/"+url.PathEscape(name), nil, nil)
}
