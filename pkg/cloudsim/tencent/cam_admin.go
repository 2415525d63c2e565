package tencent

import (
	"fmt"
	"net/http"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// KeyBody is a static API key for POST /admin/tencent/keys.
type KeyBody struct {
	SecretID  string `json:"secretId"`
	SecretKey string `json:"secretKey"`
}

// MetadataRoleBody binds a role to the metadata service's instance.
type MetadataRoleBody struct {
	Name string `json:"name"` // "" unbinds
}

// registerAdmin adds the CAM admin routes:
//
//	POST   /admin/tencent/keys                  accept a static key (KeyBody), e.g. a rotated one
//	DELETE /admin/tencent/keys/{secretId}       revoke a static key
//	GET    /admin/tencent/roles                 the roles
//	PUT    /admin/tencent/roles/{name}          create or replace a role (Role)
//	DELETE /admin/tencent/roles/{name}          delete a role
//	PUT    /admin/tencent/metadata/role         bind a role to the metadata service (MetadataRoleBody)
//	GET    /admin/tencent/oidcproviders         the OIDC identity providers
//	PUT    /admin/tencent/oidcproviders/{id}    create or replace one (OIDCProvider)
//	GET    /admin/tencent/credentials/temporary the temporary credentials issued (no secrets)
func (m *CAM) registerAdmin() {
	h := m.core.HandleAdminFunc
	h("POST /admin/tencent/keys", func(r *http.Request) (int, any, error) {
		var in KeyBody
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		return http.StatusNoContent, nil, m.AddKey(in.SecretID, in.SecretKey)
	})
	h("DELETE /admin/tencent/keys/{secretId}", func(r *http.Request) (int, any, error) {
		return http.StatusNoContent, nil, m.RevokeKey(r.PathValue("secretId"))
	})
	h("GET /admin/tencent/roles", func(*http.Request) (int, any, error) { return http.StatusOK, m.Roles(), nil })
	h("PUT /admin/tencent/roles/{name}", func(r *http.Request) (int, any, error) {
		var in Role
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		if in.Name != "" && in.Name != r.PathValue("name") {
			return 0, nil, fmt.Errorf("%w: the body names role %q, the path %q", core.ErrInvalid, in.Name, r.PathValue("name"))
		}
		in.Name = r.PathValue("name")
		out, err := m.PutRole(in)
		return http.StatusOK, out, err
	})
	h("DELETE /admin/tencent/roles/{name}", func(r *http.Request) (int, any, error) {
		return http.StatusNoContent, nil, m.DeleteRole(r.PathValue("name"))
	})
	h("PUT /admin/tencent/metadata/role", func(r *http.Request) (int, any, error) {
		var in MetadataRoleBody
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		return http.StatusNoContent, nil, m.BindMetadataRole(in.Name)
	})
	h("GET /admin/tencent/oidcproviders", func(*http.Request) (int, any, error) {
		return http.StatusOK, m.OIDCProviders(), nil
	})
	h("PUT /admin/tencent/oidcproviders/{id}", func(r *http.Request) (int, any, error) {
		var in OIDCProvider
		if err := core.DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		if in.ID != "" && in.ID != r.PathValue("id") {
			return 0, nil, fmt.Errorf("%w: the body names provider %q, the path %q", core.ErrInvalid, in.ID, r.PathValue("id"))
		}
		in.ID = r.PathValue("id")
		return http.StatusNoContent, nil, m.PutOIDCProvider(in)
	})
	h("GET /admin/tencent/credentials/temporary", func(*http.Request) (int, any, error) {
		return http.StatusOK, m.TempCredentials(), nil
	})
}
