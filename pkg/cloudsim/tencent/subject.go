package tencent

// subjectOf is the CAM subject a request's SecretId acts as, by which
// policies are attached and calls authorized: a static key's SecretId
// itself. Temporary credentials map to their role ("role/<RoleName>")
// here.
func (d *Dialect) subjectOf(secretID string) string { return secretID }
