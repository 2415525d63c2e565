package oci

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common/auth"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// PathFederation is the x509 federation endpoint of OCI's auth service
// (https://auth.<region>.oraclecloud.com/v1/x509).
const PathFederation = "/v1/x509"

// ActionFederation names the federation calls in the call log.
const ActionFederation = ActionPrefix + "auth:X509Federation"

// federationSignedHeaders are the headers the SDK signs a federation
// request with: no host ("host is not needed for the federation
// endpoint", oci-go-sdk common/auth/federation_client.go genericHeaders),
// and the body headers.
var federationSignedHeaders = []string{"date", "(request-target)", "content-length", "content-type", "x-content-sha256"}

// serveFederation exchanges an instance's identity certificate for a
// security token, as OCI's auth service does for instance principals.
// Source: oci-go-sdk common/auth/federation_client.go (x509FederationClient):
// a POST of X509FederationDetails {certificate, publicKey,
// intermediateCertificates, fingerprintAlgorithm} signed with the leaf
// certificate's key under keyId "<tenancy>/fed-x509-sha256/<SHA-256
// fingerprint of the leaf>" (older SDKs: "fed-x509/<SHA-1>"), answered
// with {"token": "<JWT>"}; the token is bound to the session publicKey
// (securitytoken.go). A certificate that does not chain to the cloud's
// CA, is not the instance's current one, or whose instance is gone is
// refused with 401 NotAuthenticated, as is a bad signature.
func (d *Dialect) serveFederation(w http.ResponseWriter, r *http.Request) {
	started := time.Now()
	ci := core.CallInfo{Time: d.core.Now(), Dialect: DialectName, Service: "auth", Action: ActionFederation,
		Region: d.region, RequestID: newRequestID(r.Header.Get("opc-request-id")), RemoteAddr: r.RemoteAddr}
	status, body := d.federate(r, &ci)
	ci.Duration = time.Since(started)
	d.core.Record(ci)
	w.Header().Set("opc-request-id", ci.RequestID)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (d *Dialect) federate(r *http.Request, ci *core.CallInfo) (int, []byte) {
	fail := func(e *Error) (int, []byte) {
		ci.Code, ci.Message = e.Code, e.Message
		return e.Status, encodeError(e)
	}
	if r.Method != http.MethodPost {
		return fail(Errorf(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "The method %s is not allowed on %s (allowed: POST).", r.Method, PathFederation))
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return fail(Errorf(http.StatusBadRequest, CodeCannotParseRequest, "Reading the request body: %v.", err))
	}
	s, err := parseSignature(r.Header.Get("Authorization"))
	if err != nil {
		return fail(notAuthenticated("%v", err))
	}
	if msg := d.checkSigned(r, body, s, federationSignedHeaders); msg != "" {
		return fail(notAuthenticated("%s", msg))
	}
	parts := strings.Split(s.keyID, "/")
	if len(parts) != 3 || (parts[1] != "fed-x509-sha256" && parts[1] != "fed-x509") {
		return fail(notAuthenticated("keyId %q: want <tenancy OCID>/fed-x509-sha256/<certificate fingerprint>", s.keyID))
	}
	tenancy, kind, fp := parts[0], parts[1], strings.ToLower(parts[2])

	var details auth.X509FederationDetails
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&details); err != nil {
		return fail(badRequest("The request body is not X509FederationDetails: %v.", err))
	}
	cert, err := parseBase64Cert(details.Certificate)
	if err != nil {
		return fail(badRequest("certificate: %v.", err))
	}
	inters := x509.NewCertPool()
	for i, raw := range details.IntermediateCertificates {
		c, err := parseBase64Cert(raw)
		if err != nil {
			return fail(badRequest("intermediateCertificates[%d]: %v.", i, err))
		}
		inters.AddCert(c)
	}
	d.ids.mu.Lock()
	roots := d.ids.roots
	instanceID := subjectValue(cert, "opc-instance:")
	current := d.ids.leaves[instanceID]
	d.ids.mu.Unlock()
	if roots == nil {
		return fail(notAuthenticated("no instance certificate was ever issued by this cloud"))
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inters, CurrentTime: d.core.Now(),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return fail(notAuthenticated("the certificate does not chain to the cloud's CA through the intermediates given: %v", err))
	}
	want := certFingerprintSHA256(cert)
	if kind == "fed-x509" {
		want = certFingerprintSHA1(cert)
	}
	if fp != want {
		return fail(notAuthenticated("the keyId's fingerprint %s is not the certificate's %s", fp, want))
	}
	if got := subjectValue(cert, "opc-tenant:"); got != tenancy {
		return fail(notAuthenticated("the keyId's tenancy %s is not the certificate's %s", tenancy, got))
	}
	if current == nil || !current.cert.Equal(cert) {
		return fail(notAuthenticated("the certificate is not instance %s's current identity certificate", instanceID))
	}
	ci.Principal = instanceID
	if rec, err := d.core.InstanceRecord(instanceID); err != nil || rec.OCID != instanceID || rec.State == core.StateTerminating {
		return fail(notAuthenticated("the instance %s no longer exists", instanceID))
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return fail(notAuthenticated("the certificate's key is not RSA"))
	}
	if msg := verifySignature(r, s, pub); msg != "" {
		return fail(notAuthenticated("%s with the certificate's key", msg))
	}
	if f := d.core.Fault(r.Context(), ci.Action); f != nil {
		e := faultError(f, ci.Action)
		st, b := fail(e)
		if f.HTTPStatus != 0 {
			ci.Code = f.Code()
		}
		return st, b
	}
	session, err := parseBase64PublicKey(details.PublicKey)
	if err != nil {
		return fail(badRequest("publicKey: %v.", err))
	}
	token, _, err := d.issueSecurityToken(current, session)
	if err != nil {
		return fail(Errorf(http.StatusInternalServerError, CodeInternalServerError, "cloudsim: signing the token: %v", err))
	}
	ci.Code = core.CodeOK
	b, _ := json.Marshal(auth.Token{Token: token})
	return http.StatusOK, b
}

// parseBase64Cert parses a certificate as the SDK sends it: the PEM body
// without its armor and line breaks (base64 DER).
func parseBase64Cert(s string) (*x509.Certificate, error) {
	der, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

// parseBase64PublicKey parses a PKIX RSA public key sent as base64 DER.
func parseBase64PublicKey(s string) (*rsa.PublicKey, error) {
	der, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, err
	}
	rk, ok := k.(*rsa.PublicKey)
	if !ok {
		return nil, errNotRSA
	}
	return rk, nil
}

var errNotRSA = errors.New("not an RSA key")
