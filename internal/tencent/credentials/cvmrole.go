package credentials

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
)

// CVMRole is the CAM role bound to the instance the CCM runs on: the
// instance metadata service hands out its temporary credentials at
// /latest/meta-data/cam/security-credentials/<role>, and lists the role at
// .../security-credentials/ (tencentcloud-sdk-go common/cvm_role_provider.go,
// https://cloud.tencent.com/document/product/213/4934). The SDK's own
// CvmRoleProvider has the metadata URL built in; this one takes it from
// the config so that tests and the demo can point it at cloudsim.
type CVMRole struct {
	// Endpoint is the metadata service, scheme://host[:port].
	Endpoint string
	// RoleName is the role; empty: the one the metadata service lists,
	// looked up at every fetch (a role re-bound to the instance is
	// followed).
	RoleName string
	// Client sends the requests (default: a client with a 5 s timeout).
	Client *http.Client
}

const metadataCredentialsPath = "/latest/meta-data/cam/security-credentials/"

// Name implements Source.
func (r CVMRole) Name() string { return ccmmetrics.SourceCVMRole }

// Describe implements Source.
func (r CVMRole) Describe() string {
	role := r.RoleName
	if role == "" {
		role = "bound to the instance"
	}
	return fmt.Sprintf("the CVM's CAM role (%s) from the metadata service %s", role, r.Endpoint)
}

// metadataCredentials is the answer for a role (the SDK's roleRsp).
type metadataCredentials struct {
	TmpSecretId  string `json:"TmpSecretId"`
	TmpSecretKey string `json:"TmpSecretKey"`
	ExpiredTime  int64  `json:"ExpiredTime"`
	Token        string `json:"Token"`
	Code         string `json:"Code"`
}

// Fetch implements Source.
func (r CVMRole) Fetch(ctx context.Context) (Value, error) {
	role := r.RoleName
	if role == "" {
		body, err := r.get(ctx, metadataCredentialsPath)
		if err != nil {
			return Value{}, fmt.Errorf("find the CAM role bound to this instance: %w", err)
		}
		// One role per instance; take the first line in case of a list.
		role, _, _ = strings.Cut(strings.TrimSpace(string(body)), "\n")
		if role = strings.TrimSpace(role); role == "" {
			return Value{}, fmt.Errorf("find the CAM role bound to this instance: %s%s listed none", r.Endpoint, metadataCredentialsPath)
		}
	}
	body, err := r.get(ctx, metadataCredentialsPath+role)
	if err != nil {
		return Value{}, fmt.Errorf("temporary credentials of CAM role %s: %w", role, err)
	}
	var m metadataCredentials
	if err := json.Unmarshal(body, &m); err != nil {
		return Value{}, fmt.Errorf("temporary credentials of CAM role %s: the metadata service's answer is not JSON: %v", role, err)
	}
	switch {
	case m.Code != "Success":
		return Value{}, fmt.Errorf("temporary credentials of CAM role %s: the metadata service answered Code %q", role, m.Code)
	case m.TmpSecretId == "" || m.TmpSecretKey == "" || m.Token == "" || m.ExpiredTime <= 0:
		return Value{}, fmt.Errorf("temporary credentials of CAM role %s: the answer lacks TmpSecretId, TmpSecretKey, Token or ExpiredTime", role)
	}
	return Value{SecretID: m.TmpSecretId, SecretKey: m.TmpSecretKey, Token: m.Token, Expiry: time.Unix(m.ExpiredTime, 0)}, nil
}

// get reads a metadata path; 404 means no such role is bound (the SDK's
// reading too).
func (r CVMRole) get(ctx context.Context, path string) ([]byte, error) {
	client := r.Client
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	url := r.Endpoint + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("GET %s: 404: no such CAM role is bound to this instance (bind one in the CVM console: Instance settings > Bind/Modify role)", url)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	return body, nil
}
