package tencent

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// The instance metadata service's CAM paths, as tencentcloud-sdk-go's
// CvmRoleProvider reads them (common/cvm_role_provider.go, which points
// to https://cloud.tencent.com/document/product/213/4934): on the real
// cloud at http://metadata.tencentyun.com, here on cloudsim's own address.
const (
	// MetadataPrefix is where cloudsim serves the metadata service.
	MetadataPrefix = "/latest/meta-data/"
	// metadataCredentials lists the role bound to the instance; with the
	// role name appended it answers that role's temporary credentials.
	metadataCredentials = MetadataPrefix + "cam/security-credentials/"
)

// metadataRoleCredentials is the answer for a role: the SDK's roleRsp
// (cvm_role_provider.go): TmpSecretId, TmpSecretKey, ExpiredTime (Unix
// seconds), Expiration, Token, and Code "Success".
type metadataRoleCredentials struct {
	TmpSecretId  string `json:"TmpSecretId"`
	TmpSecretKey string `json:"TmpSecretKey"`
	ExpiredTime  int64  `json:"ExpiredTime"`
	Expiration   string `json:"Expiration"`
	Token        string `json:"Token"`
	Code         string `json:"Code"`
}

// serveMetadata answers GET /latest/meta-data/cam/security-credentials/
// with the bound role's name, and .../<role> with fresh temporary
// credentials for it. No role bound, another role, or any other metadata
// path: 404, which the SDK reads as "no role bound"
// (cvm_role_provider.go: roleNotBound on http.StatusNotFound).
func (m *CAM) serveMetadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, metadataCredentials)
	if !ok {
		http.Error(w, "cloudsim serves only the cam/security-credentials/ metadata paths", http.StatusNotFound)
		return
	}
	m.mu.Lock()
	bound := m.metadataRole
	m.mu.Unlock()
	if bound == "" || (rest != "" && rest != bound) {
		http.Error(w, "no CAM role bound to this instance: "+rest, http.StatusNotFound)
		return
	}
	if rest == "" {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(bound))
		return
	}
	t, err := m.issue(bound, 0, "metadata")
	if err != nil { // the role was deleted meanwhile
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	body, _ := json.Marshal(metadataRoleCredentials{
		TmpSecretId: t.SecretID, TmpSecretKey: t.SecretKey, Token: t.Token,
		ExpiredTime: t.Expiry.Unix(), Expiration: t.Expiry.UTC().Format(time.RFC3339),
		Code: "Success",
	})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
