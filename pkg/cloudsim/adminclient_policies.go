package cloudsim

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/ccmkit/ccm/pkg/cloudsim/oci"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

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
