package oci

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// PrefixMetadata is the instance metadata service's version 2 API, served
// at http://169.254.169.254/opc/v2 on the real cloud.
const PrefixMetadata = "/opc/v2"

// The instance metadata service (IMDSv2), the part instance principals
// read. Sources: OCI "Getting Instance Metadata" (every /opc/v2 request
// must carry the header "Authorization: Bearer Oracle", requests without
// it are rejected, and so are requests forwarded with Forwarded,
// X-Forwarded-For or X-Forwarded-Host; the instance fields region,
// canonicalRegionName, id, compartmentId, availabilityDomain, ...), and
// oci-go-sdk common/auth/instance_principal_key_provider.go (the paths the
// SDK reads: /instance/region, /identity/cert.pem, /identity/key.pem,
// /identity/intermediate.pem). The status of a rejected request is not
// documented: 401 is cloudsim's choice. Which instance answers is set
// with SetMetadataInstance (cloudsim's choice).
func (d *Dialect) serveMetadata(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, PrefixMetadata+"/")
	ci := core.CallInfo{Time: d.core.Now(), Dialect: DialectName, Service: "imds", Action: ActionPrefix + "imds:" + path,
		Region: d.region, RequestID: newRequestID(""), RemoteAddr: r.RemoteAddr}
	started := time.Now()
	status, ctype, body := d.metadataAnswer(r, path, &ci)
	ci.Duration = time.Since(started)
	ci.Code = core.CodeOK
	if status != http.StatusOK {
		ci.Code, ci.Message = "HTTP"+strconv.Itoa(status), string(body)
	}
	d.core.Record(ci)
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// metadataAnswer is the status, content type and body of one request.
func (d *Dialect) metadataAnswer(r *http.Request, path string, ci *core.CallInfo) (int, string, []byte) {
	text := func(status int, s string) (int, string, []byte) { return status, "text/plain", []byte(s) }
	if r.Method != http.MethodGet {
		return text(http.StatusMethodNotAllowed, "cloudsim: the instance metadata service answers GET only")
	}
	if r.Header.Get("Authorization") != "Bearer Oracle" {
		return text(http.StatusUnauthorized, `cloudsim: /opc/v2 requests must carry the header "Authorization: Bearer Oracle"`)
	}
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host"} {
		if r.Header.Get(h) != "" {
			return text(http.StatusForbidden, "cloudsim: the instance metadata service rejects forwarded requests ("+h+")")
		}
	}
	if f := d.core.Fault(r.Context(), ci.Action); f != nil {
		status := f.HTTPStatus
		if status == 0 {
			status = http.StatusInternalServerError
		}
		return text(status, "cloudsim: injected fault")
	}
	d.ids.mu.Lock()
	l := d.ids.leaves[d.ids.metadataFor]
	interPEM := d.ids.interPEM
	d.ids.mu.Unlock()
	if l == nil {
		return text(http.StatusNotFound, "cloudsim: the metadata service answers for no instance (PUT /admin/oci/metadata)")
	}
	rec, err := d.core.InstanceRecord(l.instanceID)
	if err != nil || rec.OCID != l.instanceID || rec.State == core.StateTerminating {
		return text(http.StatusNotFound, "cloudsim: the instance "+l.instanceID+" is gone")
	}
	ci.Principal = l.instanceID
	p := d.placementOf(rec)
	fields := map[string]string{
		"id": rec.OCID, "displayName": rec.Name, "compartmentId": p.compartment, "region": d.regionField(),
		"canonicalRegionName": d.region, "availabilityDomain": p.ad, "faultDomain": p.fd, "shape": p.shape, "tenantId": l.tenancy,
	}
	switch {
	case path == "identity/cert.pem":
		return http.StatusOK, "application/x-pem-file", l.certPEM
	case path == "identity/key.pem":
		return http.StatusOK, "application/x-pem-file", l.keyPEM
	case path == "identity/intermediate.pem":
		return http.StatusOK, "application/x-pem-file", interPEM
	case path == "instance" || path == "instance/":
		b, _ := json.Marshal(fields)
		return http.StatusOK, "application/json", b
	case strings.HasPrefix(path, "instance/"):
		if v, ok := fields[strings.TrimPrefix(path, "instance/")]; ok {
			return text(http.StatusOK, v)
		}
	}
	return text(http.StatusNotFound, "cloudsim: no metadata at /opc/v2/"+path)
}
