package tencent

import (
	"crypto/rand"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// CAM holds who may call: the static API keys (SecretId -> SecretKey), the
// CAM roles with the OIDC identity providers they trust, and the temporary
// credentials issued for those roles, by the instance metadata service
// (cam_metadata.go) and by STS AssumeRoleWithWebIdentity (sts.go).
// Authentication (auth.go) asks it for the key that signs a request.
type CAM struct {
	core *core.Core

	mu           sync.Mutex
	keys         map[string]string // static keys: SecretId -> SecretKey
	roles        map[string]Role
	providers    map[string]*oidcProvider
	metadataRole string                     // the role bound to the instance the metadata service answers for
	temps        map[string]*TempCredential // by TmpSecretId
	issued       map[string]int             // role -> temporary credentials issued
}

// Session lifetimes.
const (
	// DefaultSessionDuration is the lifetime of temporary credentials
	// when nothing shorter is asked for: STS's documented default
	// DurationSeconds, 7,200 s (AssumeRoleWithWebIdentity, API reference
	// https://www.tencentcloud.com/document/api/1150/49454). The metadata
	// service's lifetime is not documented; cloudsim's choice is the same.
	DefaultSessionDuration = 2 * time.Hour
	// MaxSessionDuration is the documented maximum DurationSeconds, 43,200 s
	// (same page); CAM's CreateRole limits a role's SessionDuration to it too.
	MaxSessionDuration = 12 * time.Hour
	// expiredKept is how long an expired temporary credential is still
	// known, so that a call signed with it is refused as expired
	// (AuthFailure.TokenFailure) rather than as an unknown SecretId.
	// cloudsim's choice.
	expiredKept = 10 * time.Minute
)

// AccountUin is the account (owner uin) cloudsim emulates, as it appears
// in role ARNs: qcs::cam::uin/<AccountUin>:roleName/<name>. cloudsim's
// choice.
const AccountUin = "100000000001"

// Role is a CAM role as the admin API and the options take it.
type Role struct {
	Name string `json:"name"`
	// SessionDurationSeconds caps the lifetime of the role's temporary
	// credentials, like a CAM role's SessionDuration (CreateRole: 0-43200
	// seconds); 0 means DefaultSessionDuration. Tests set seconds.
	SessionDurationSeconds int64 `json:"sessionDurationSeconds,omitempty"`
	// OIDCProviders are the identity providers (their ProviderId) the
	// role's trust policy names: only their tokens may assume the role at
	// STS.
	OIDCProviders []string `json:"oidcProviders,omitempty"`
	// Subjects, when set, are the token subjects (the sub claim, e.g.
	// system:serviceaccount:kube-system:cloud-controller-manager) allowed
	// to assume the role: a trust policy's oidc:sub condition.
	Subjects []string `json:"subjects,omitempty"`
	// RoleArn is set in answers: qcs::cam::uin/<uin>:roleName/<name>.
	RoleArn string `json:"roleArn,omitempty"`
}

// RoleArn returns the ARN of the role named name.
func RoleArn(name string) string { return "qcs::cam::uin/" + AccountUin + ":roleName/" + name }

// roleArnPattern is the role ARN form of the AssumeRole API reference
// (https://cloud.tencent.com/document/product/598/33164: RoleArn
// "qcs::cam::uin/12345678:roleName/testRoleName"); role ids
// (":role/<id>") are not emulated.
var roleArnPattern = regexp.MustCompile(`^qcs::cam::uin/([0-9]+):roleName/(.+)$`)

// roleNamePattern: CAM role names are letters, digits and +=,.@_- (CAM
// CreateRole, RoleName), up to 128 characters.
var roleNamePattern = regexp.MustCompile(`^[\w+=,.@-]{1,128}$`)

// TempCredential is one issued temporary credential.
type TempCredential struct {
	SecretID  string    `json:"tmpSecretId"`
	SecretKey string    `json:"-"`
	Token     string    `json:"-"`
	Role      string    `json:"role"`
	Expiry    time.Time `json:"expiry"`
	// Via is how it was issued: "metadata" or "sts".
	Via string `json:"via"`
}

// NewCAM returns the credential store with the static keys given.
func NewCAM(c *core.Core, keys map[string]string) *CAM {
	m := &CAM{
		core:      c,
		keys:      maps.Clone(keys),
		roles:     map[string]Role{},
		providers: map[string]*oidcProvider{},
		temps:     map[string]*TempCredential{},
		issued:    map[string]int{},
	}
	if m.keys == nil {
		m.keys = map[string]string{}
	}
	m.registerAdmin()
	return m
}

// AddKey accepts a static API key (or replaces its SecretKey): a new key
// made in the console, as in a key rotation.
func (m *CAM) AddKey(secretID, secretKey string) error {
	if secretID == "" || secretKey == "" {
		return fmt.Errorf("%w: a key needs a SecretId and a SecretKey", core.ErrInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.keys[secretID] = secretKey
	return nil
}

// RevokeKey deletes a static API key: calls signed with it are refused
// with AuthFailure.SecretIdNotFound from now on.
func (m *CAM) RevokeKey(secretID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.keys[secretID]; !ok {
		return fmt.Errorf("%w: no key %s", core.ErrNotFound, secretID)
	}
	delete(m.keys, secretID)
	return nil
}

// PutRole creates or replaces a role.
func (m *CAM) PutRole(r Role) (Role, error) {
	if !roleNamePattern.MatchString(r.Name) {
		return Role{}, fmt.Errorf("%w: role name %q: want 1-128 letters, digits or +=,.@_-", core.ErrInvalid, r.Name)
	}
	if r.SessionDurationSeconds < 0 || time.Duration(r.SessionDurationSeconds)*time.Second > MaxSessionDuration {
		return Role{}, fmt.Errorf("%w: role %s: sessionDurationSeconds must be 0-%d", core.ErrInvalid, r.Name, int64(MaxSessionDuration/time.Second))
	}
	r.RoleArn = RoleArn(r.Name)
	r.OIDCProviders, r.Subjects = slices.Clone(r.OIDCProviders), slices.Clone(r.Subjects)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roles[r.Name] = r
	return r, nil
}

// Roles lists the roles by name.
func (m *CAM) Roles() []Role {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Collect(maps.Values(m.roles))
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// DeleteRole deletes a role. Credentials already issued for it stay valid
// until they expire, as on the real cloud; the metadata service stops
// answering for it.
func (m *CAM) DeleteRole(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.roles[name]; !ok {
		return fmt.Errorf("%w: no role %s", core.ErrNotFound, name)
	}
	delete(m.roles, name)
	if m.metadataRole == name {
		m.metadataRole = ""
	}
	return nil
}

// BindMetadataRole binds a role to the instance the metadata service
// answers for ("" unbinds), as binding a CAM role to a CVM does (one role
// per instance: https://cloud.tencent.com/document/product/213/47668).
// Which instance asks is not modeled: every caller of the metadata
// endpoint is that instance (cloudsim's choice).
func (m *CAM) BindMetadataRole(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.roles[name]; name != "" && !ok {
		return fmt.Errorf("%w: no role %s", core.ErrNotFound, name)
	}
	m.metadataRole = name
	return nil
}

// Issued returns how many temporary credentials were issued for role.
func (m *CAM) Issued(role string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.issued[role]
}

// TempCredentials lists the known temporary credentials (without their
// secrets), newest last.
func (m *CAM) TempCredentials() []TempCredential {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]TempCredential, 0, len(m.temps))
	for _, t := range m.temps {
		out = append(out, TempCredential{SecretID: t.SecretID, Role: t.Role, Expiry: t.Expiry, Via: t.Via})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Expiry.Before(out[j].Expiry) })
	return out
}

// TempSecrets returns the SecretKeys and tokens of the temporary
// credentials still known: what a test scans logs for, to prove that none
// leaked.
func (m *CAM) TempSecrets() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, 2*len(m.temps))
	for _, t := range m.temps {
		out = append(out, t.SecretKey, t.Token)
	}
	return out
}

// issue makes temporary credentials for role, valid for want (0: the
// default) capped by the role's session duration.
func (m *CAM) issue(role string, want time.Duration, via string) (*TempCredential, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.roles[role]
	if !ok {
		return nil, fmt.Errorf("%w: no role %s", core.ErrNotFound, role)
	}
	life := want
	if life <= 0 {
		life = DefaultSessionDuration
	}
	if limit := time.Duration(r.SessionDurationSeconds) * time.Second; limit > 0 && life > limit {
		life = limit
	}
	now := m.core.Now()
	for id, t := range m.temps {
		if now.Sub(t.Expiry) > expiredKept {
			delete(m.temps, id)
		}
	}
	t := &TempCredential{
		SecretID:  "AKID" + randomString(32),
		SecretKey: randomString(32),
		Token:     randomString(96),
		Role:      role,
		Expiry:    now.Add(life).Truncate(time.Second),
		Via:       via,
	}
	m.temps[t.SecretID] = t
	m.issued[role]++
	return t, nil
}

// signingKey returns the key that signs a request from secretID carrying
// token (X-TC-Token), or the error the API answers. The codes are API
// 3.0's common error codes (every product's "Error Codes" page, e.g.
// https://www.tencentcloud.com/document/api/213/15694):
// AuthFailure.SecretIdNotFound for an unknown key, and
// AuthFailure.TokenFailure ("Invalid token"; the SDK's clb errors.go:
// AUTHFAILURE_TOKENFAILURE "token错误") for temporary credentials without
// their token, with another one's, or expired: no code of its own is
// documented for an expired token.
func (m *CAM) signingKey(secretID, token string) (string, *Error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if key, ok := m.keys[secretID]; ok {
		if token != "" {
			return "", Errorf("AuthFailure.TokenFailure", "The token is invalid: SecretId `%s` is a permanent key, which is used without X-TC-Token.", secretID)
		}
		return key, nil
	}
	t, ok := m.temps[secretID]
	if !ok {
		return "", Errorf("AuthFailure.SecretIdNotFound", "The SecretId `%s` is not found, please check it.", secretID)
	}
	switch now := m.core.Now(); {
	case token == "":
		return "", Errorf("AuthFailure.TokenFailure", "The token is invalid: temporary credentials must be sent with their token (X-TC-Token).")
	case token != t.Token:
		return "", Errorf("AuthFailure.TokenFailure", "The token is invalid: it does not belong to SecretId `%s`.", secretID)
	case !now.Before(t.Expiry):
		return "", Errorf("AuthFailure.TokenFailure", "The token is invalid: the temporary credentials of role %s expired at %s (%s ago).",
			t.Role, t.Expiry.UTC().Format(time.RFC3339), now.Sub(t.Expiry).Round(time.Second))
	}
	return t.SecretKey, nil
}

// subjectOf names who an authenticated SecretId is, for authorization:
// a static key is itself (its SecretId), temporary credentials are their
// role, "role/<RoleName>". An unknown SecretId is returned as it is.
func (m *CAM) subjectOf(secretID string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.temps[secretID]; ok {
		return "role/" + t.Role
	}
	return secretID
}

// randomString returns n random letters and digits.
func randomString(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
