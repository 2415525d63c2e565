// Package cloudpolicy holds the two clouds' access policy languages, as
// far as ccmkit needs them: cam (Tencent Cloud CAM policies) and ociiam
// (OCI IAM policy statements, dynamic-group matching rules, and the table
// of the permissions each OCI operation needs).
//
// They live outside the emulator because three parts share them: cloudsim
// enforces the policies, the unit tests of deploy/policies check the
// shipped policies against the calls the code makes, and the CCM's
// preflight reads the shipped policies to name what a principal lacks. The
// CCM binary must not link the emulator, so the table has one home here.
package cloudpolicy
