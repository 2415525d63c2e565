package tencent

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	tcjson "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common/json"
)

// STS (sts, version 2018-08-13): AssumeRoleWithWebIdentity, which
// exchanges an OIDC token (a projected ServiceAccount token) for
// temporary credentials of a CAM role. API reference:
// https://www.tencentcloud.com/document/api/1150/49454 (and
// https://cloud.tencent.com/document/product/1312/73070); its error codes
// are the SDK's (sts/v20180813/client.go, AssumeRoleWithWebIdentity):
// InternalError.GetRoleError, InternalError.SystemError,
// InternalError.UnknownError, InvalidParameter.OverLimit,
// InvalidParameter.ParamError, InvalidParameter.WebIdentityTokenError,
// RequestLimitExceeded, UnauthorizedOperation.
const (
	stsService = "sts"
	// STSVersion is the sts API version cloudsim serves.
	STSVersion = "2018-08-13"
)

// unsignedActions are the actions called without a signature: "when
// called with signature method v3, this API doesn't require Authorization
// and X-TC-Token" (AssumeRoleWithWebIdentity's reference); the SDK sends
// `Authorization: SKIP` (common/client.go, sendWithoutSignature).
var unsignedActions = map[string]string{"AssumeRoleWithWebIdentity": stsService}

// unsignedService returns the service of an unsigned call, or false when
// r must be authenticated.
func unsignedService(r interface{ Get(string) string }, host string) (string, bool) {
	if a := r.Get("Authorization"); a != "" && a != "SKIP" {
		return "", false
	}
	svc, ok := unsignedActions[r.Get("X-TC-Action")]
	if !ok {
		return "", false
	}
	if m := apiHost.FindStringSubmatch(hostOnly(host)); m != nil {
		return m[1], true // another service's host: its own answer (InvalidAction)
	}
	return svc, true
}

// assumeRoleWithWebIdentityParams: the documented input parameters.
// DurationSeconds is a number, or a numeric string as in the reference's
// example ("DurationSeconds": "5000").
type assumeRoleWithWebIdentityParams struct {
	ProviderId       *string           `json:"ProviderId"`
	WebIdentityToken *string           `json:"WebIdentityToken"`
	RoleArn          *string           `json:"RoleArn"`
	RoleSessionName  *string           `json:"RoleSessionName"`
	DurationSeconds  tcjson.RawMessage `json:"DurationSeconds"`
}

// stsCredentials is the Credentials data type: Token, TmpSecretId,
// TmpSecretKey.
type stsCredentials struct {
	Token        string `json:"Token"`
	TmpSecretId  string `json:"TmpSecretId"`
	TmpSecretKey string `json:"TmpSecretKey"`
}

// assumeRoleWithWebIdentityResponse: the documented output parameters.
type assumeRoleWithWebIdentityResponse struct {
	ExpiredTime int64          `json:"ExpiredTime"`
	Expiration  string         `json:"Expiration"`
	Credentials stsCredentials `json:"Credentials"`
	RequestId   *string        `json:"RequestId"`
}

func (m *CAM) stsService() *Service {
	return &Service{Name: stsService, Version: STSVersion, Actions: map[string]Action{
		// "A maximum of 20 requests can be initiated per second for this
		// API" (the reference).
		"AssumeRoleWithWebIdentity": {Handler: m.assumeRoleWithWebIdentity, RateLimit: 20, RegionRequired: true},
	}}
}

func (m *CAM) assumeRoleWithWebIdentity(call *Call, body []byte) (any, error) {
	var p assumeRoleWithWebIdentityParams
	if err := Decode(body, &p); err != nil {
		return nil, err
	}
	for name, v := range map[string]*string{"ProviderId": p.ProviderId, "WebIdentityToken": p.WebIdentityToken, "RoleArn": p.RoleArn, "RoleSessionName": p.RoleSessionName} {
		if v == nil || strings.TrimSpace(*v) == "" {
			return nil, Errorf("MissingParameter", "The request is missing a required parameter `%s`.", name)
		}
	}
	duration, err := durationSeconds(p.DurationSeconds)
	if err != nil {
		return nil, err
	}
	// Which code an unknown provider or role gets is not documented:
	// cloudsim's choice is InvalidParameter.ParamError, naming it.
	prov := m.provider(*p.ProviderId)
	if prov == nil {
		return nil, Errorf("InvalidParameter.ParamError", "The identity provider `%s` does not exist.", *p.ProviderId)
	}
	roleName, err := m.roleOfArn(*p.RoleArn)
	if err != nil {
		return nil, err
	}
	claims, verr := prov.verify(call.Ctx, *p.WebIdentityToken, m.core.Now())
	if verr != nil {
		var bad errToken
		if errors.As(verr, &bad) {
			return nil, Errorf("InvalidParameter.WebIdentityTokenError", "The WebIdentityToken is invalid: %s.", bad.msg)
		}
		return nil, Errorf("InternalError.SystemError", "Verifying the WebIdentityToken of identity provider `%s` failed: %v.", prov.ID, verr)
	}
	m.mu.Lock()
	role := m.roles[roleName]
	m.mu.Unlock()
	if !slices.Contains(role.OIDCProviders, prov.ID) {
		return nil, Errorf("UnauthorizedOperation", "The role `%s` does not trust the identity provider `%s`.", roleName, prov.ID)
	}
	if len(role.Subjects) > 0 && !slices.Contains(role.Subjects, claims.Subject) {
		return nil, Errorf("UnauthorizedOperation", "The role `%s` does not trust the token subject `%s`.", roleName, claims.Subject)
	}
	t, err := m.issue(roleName, duration, "sts")
	if err != nil {
		return nil, Errorf("InternalError.GetRoleError", "%v", err)
	}
	return &assumeRoleWithWebIdentityResponse{
		ExpiredTime: t.Expiry.Unix(),
		Expiration:  t.Expiry.UTC().Format(time.RFC3339),
		Credentials: stsCredentials{Token: t.Token, TmpSecretId: t.SecretID, TmpSecretKey: t.SecretKey},
	}, nil
}

// durationSeconds parses DurationSeconds: default 7,200 s, at most 43,200
// s (the reference). Zero or negative values are refused: cloudsim's
// choice of InvalidParameter.ParamError, as the SDK's own provider
// refuses them before sending.
func durationSeconds(raw tcjson.RawMessage) (time.Duration, error) {
	s := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	if s == "" || s == "null" {
		return DefaultSessionDuration, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, Errorf("InvalidParameter", "The type of parameter `DurationSeconds` is invalid: want an integer, got %s.", string(raw))
	}
	d := time.Duration(n) * time.Second
	if n <= 0 || d > MaxSessionDuration {
		return 0, Errorf("InvalidParameter.ParamError", "DurationSeconds %d is out of range: it must be 1-%d.", n, int64(MaxSessionDuration/time.Second))
	}
	return d, nil
}

// roleOfArn returns the name of the role an ARN names, if it exists in
// cloudsim's account.
func (m *CAM) roleOfArn(arn string) (string, error) {
	match := roleArnPattern.FindStringSubmatch(arn)
	if match == nil {
		return "", Errorf("InvalidParameter.ParamError", "The RoleArn `%s` is malformed: want qcs::cam::uin/<uin>:roleName/<name>.", arn)
	}
	m.mu.Lock()
	_, ok := m.roles[match[2]]
	m.mu.Unlock()
	if match[1] != AccountUin || !ok {
		return "", Errorf("InvalidParameter.ParamError", "The role `%s` does not exist.", arn)
	}
	return match[2], nil
}
