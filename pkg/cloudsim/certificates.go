package cloudsim

import "github.com/ccmkit/ccm/pkg/cloudsim/tencent"

// CertificateSpec is a certificate to upload to the Tencent certificate
// store (see tencent.CertificateSpec): a PEM server certificate with its
// key (type SVR, the default) or PEM CA certificates (type CA).
type CertificateSpec = tencent.CertificateSpec

// Certificate is a stored Tencent certificate; Certificate.ID is what CLB
// listeners name in Certificate{CertId, CertCaId}.
type Certificate = tencent.Certificate

// Certificate types.
const (
	CertTypeServer = tencent.CertTypeServer
	CertTypeCA     = tencent.CertTypeCA
)

// UploadCertificate stores a certificate for Tencent TCP_SSL listeners and
// returns it with its id.
func (s *Sim) UploadCertificate(spec tencent.CertificateSpec) (tencent.Certificate, error) {
	return s.tencent.CLB().UploadCertificate(spec)
}

// Certificates lists the stored Tencent certificates.
func (s *Sim) Certificates() []tencent.Certificate { return s.tencent.CLB().Certificates() }
