package tencent

// subjectOf is the CAM subject a request's SecretId acts as, by which
// policies are attached and calls authorized: a static key's SecretId
// itself. Temporary credentials map to their role ("role/<RoleName>")
// here (cam_roles.go).
func (d *Dialect) subjectOf(secretID string) string { return d.ids.subjectOf(secretID) }

// SubjectOf maps an authenticated SecretId to the identity that
// authorization names: a static key's SecretId itself, or
// "role/<RoleName>" for temporary credentials of a CAM role (issued by the
// metadata service or STS). A call's Principal stays the SecretId, so
// that call logs tell one set of temporary credentials from the next.
func (d *Dialect) SubjectOf(secretID string) string { return d.subjectOf(secretID) }
