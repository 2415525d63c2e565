package cloudsim

import (
	"context"
	"net/http"
	"net/url"

	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// UploadCertificate uploads a certificate to the Tencent certificate store
// and returns it with its id (for CreateListener's Certificate.CertId, or
// TKE's qcloud_cert_id).
func (c *AdminClient) UploadCertificate(ctx context.Context, spec tencent.CertificateSpec) (tencent.Certificate, error) {
	var out tencent.Certificate
	err := c.do(ctx, http.MethodPost, "tencent/certificates", spec, &out)
	return out, err
}

// Certificates lists the Tencent certificate store (never a key).
func (c *AdminClient) Certificates(ctx context.Context) ([]tencent.Certificate, error) {
	var out []tencent.Certificate
	err := c.do(ctx, http.MethodGet, "tencent/certificates", nil, &out)
	return out, err
}

// DeleteCertificate deletes a certificate no listener uses.
func (c *AdminClient) DeleteCertificate(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "tencent/certificates/"+url.PathEscape(id), nil, nil)
}
