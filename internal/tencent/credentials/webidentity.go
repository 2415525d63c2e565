package credentials

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	tchttp "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/http"
	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/profile"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
	"github.com/ccmkit/ccm/internal/tencent/config"
)

// WebIdentity exchanges a projected ServiceAccount token for temporary
// credentials of a CAM role at STS AssumeRoleWithWebIdentity (sts,
// 2018-08-13; https://www.tencentcloud.com/document/api/1150/49454): the
// OIDC pattern TKE documents for workloads. The token file is read at
// every fetch, since the kubelet rotates it. The call is unsigned
// (`Authorization: SKIP`, as the reference and the SDK's
// OIDCRoleArnProvider send it); the SDK's provider always uses HTTPS,
// this one takes the endpoint's scheme from the config so that tests and
// the demo can point it at cloudsim.
type WebIdentity struct {
	Region                       string
	TokenFile                    string
	RoleArn, ProviderID, Session string
	Duration                     time.Duration
	// Endpoint and Scheme (HTTP or HTTPS) are STS's host[:port] and scheme.
	Endpoint, Scheme string
	// Transport carries the call (nil: the SDK's default); the CCM's
	// shared transport counts it in the cloud API metrics.
	Transport http.RoundTripper
}

// Name implements Source.
func (w WebIdentity) Name() string { return ccmmetrics.SourceWebIdentity }

// Describe implements Source.
func (w WebIdentity) Describe() string {
	return fmt.Sprintf("web identity: the token in %s exchanged at STS %s://%s for CAM role %s (identity provider %s)",
		w.TokenFile, lower(w.Scheme), w.Endpoint, w.RoleArn, w.ProviderID)
}

// stsAnswer is AssumeRoleWithWebIdentity's output (the reference's
// output parameters).
type stsAnswer struct {
	Response struct {
		Credentials struct {
			Token, TmpSecretId, TmpSecretKey string
		}
		ExpiredTime int64
	}
}

// Fetch implements Source.
func (w WebIdentity) Fetch(ctx context.Context) (Value, error) {
	token, err := config.ReadWebIdentityToken(w.TokenFile)
	if err != nil {
		return Value{}, fmt.Errorf("web_identity_token_file %s: %w", w.TokenFile, err)
	}
	cpf := profile.NewClientProfile()
	cpf.HttpProfile.Endpoint, cpf.HttpProfile.Scheme = w.Endpoint, w.Scheme
	cpf.HttpProfile.ReqMethod = http.MethodPost
	cpf.HttpProfile.ReqTimeout = 10
	cpf.Language = "en-US"
	cpf.NetworkFailureMaxRetries, cpf.RateLimitExceededMaxRetries = 0, 0 // the refresh loop retries
	cpf.DisableRegionBreaker = true
	client := common.NewCommonClient(nil, w.Region, cpf)
	client.WithRequestClient("ccmkit-cloud-controller-manager")
	if w.Transport != nil {
		client.WithHttpTransport(w.Transport)
	}
	req := tchttp.NewCommonRequest("sts", "2018-08-13", "AssumeRoleWithWebIdentity")
	req.SetSkipSign(true)
	req.SetContext(ctx)
	if err := req.SetActionParameters(map[string]any{
		"ProviderId":       w.ProviderID,
		"WebIdentityToken": token,
		"RoleArn":          w.RoleArn,
		"RoleSessionName":  w.Session,
		"DurationSeconds":  int64(w.Duration / time.Second),
	}); err != nil {
		return Value{}, err
	}
	resp := tchttp.NewCommonResponse()
	if err := client.Send(req, resp); err != nil {
		// The SDK's error carries the code, message and request id, never
		// the request's token.
		return Value{}, fmt.Errorf("AssumeRoleWithWebIdentity for %s (identity provider %s): %w", w.RoleArn, w.ProviderID, err)
	}
	var a stsAnswer
	if err := json.Unmarshal(resp.GetBody(), &a); err != nil {
		return Value{}, fmt.Errorf("AssumeRoleWithWebIdentity for %s: the answer is not JSON: %v", w.RoleArn, err)
	}
	c := a.Response.Credentials
	if c.TmpSecretId == "" || c.TmpSecretKey == "" || c.Token == "" || a.Response.ExpiredTime <= 0 {
		return Value{}, fmt.Errorf("AssumeRoleWithWebIdentity for %s: the answer lacks Credentials or ExpiredTime", w.RoleArn)
	}
	return Value{SecretID: c.TmpSecretId, SecretKey: c.TmpSecretKey, Token: c.Token, Expiry: time.Unix(a.Response.ExpiredTime, 0)}, nil
}

func lower(s string) string {
	if s == "HTTP" {
		return "http"
	}
	return "https"
}
