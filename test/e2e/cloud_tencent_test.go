//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ccmkit/ccm/internal/testcluster"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// tencentEnv is Tencent Cloud under the conformance scenarios: the suite's
// main CCM (main_test.go), CVM instances in the suite's VPC.
type tencentEnv struct{}

var _ cloudEnv = tencentEnv{}

func (tencentEnv) name() string { return "tencentcloud" }

// start: the suite's main CCM is already running (TestMain).
func (tencentEnv) start(*testing.T) {}

func (tencentEnv) newInstance(t *testing.T, name string) cloudsim.Instance {
	t.Helper()
	return newInstance(t, name)
}

func (e tencentEnv) newInstanceWith(t *testing.T, name string, setup func(*cloudsim.Instance)) cloudsim.Instance {
	t.Helper()
	if setup == nil {
		return newInstance(t, name)
	}
	in := cloudsim.Instance{
		ID: fmt.Sprintf("ins-e2e%05d", idSeq.Add(1)), Name: name, Type: "S5.MEDIUM4", Zone: zone, PrivateIP: nextIP(),
		VpcID: vpcID, SubnetID: "subnet-e2e00001", State: "RUNNING",
	}
	setup(&in)
	added, err := suite.sim.AddInstances(in)
	if err != nil {
		t.Fatalf("add instance %s: %v", name, err)
	}
	return added[0]
}

func (tencentEnv) foreignInstance(t *testing.T, name string) cloudsim.Instance {
	t.Helper()
	in := cloudsim.Instance{ID: "ins-othervpc", Name: name, Zone: zone, PrivateIP: nextIP(), VpcID: "vpc-other001", State: "RUNNING"}
	added, err := suite.sim.AddInstances(in)
	if err != nil {
		t.Fatal(err)
	}
	return added[0]
}

func (tencentEnv) providerID(in cloudsim.Instance) string {
	return fmt.Sprintf("tencentcloud:///%s/%s", zone, in.ID)
}

func (tencentEnv) labels(in cloudsim.Instance) map[string]string {
	return map[string]string{
		corev1.LabelTopologyZone:       zone,
		corev1.LabelTopologyRegion:     region,
		corev1.LabelInstanceTypeStable: "S5.MEDIUM4",
	}
}

// mappings: the seed project's private IPv4 name, the instance name, the
// instance ID, or only the InternalIP.
func (tencentEnv) mappings() []nodeMapping {
	return []nodeMapping{
		{name: "name is private IP", node: func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: in.PrivateIP, InternalIP: in.PrivateIP}
		}},
		{name: "name is instance name, no address", node: func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: in.Name}
		}},
		{name: "name is instance ID", node: func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: in.ID, InternalIP: in.PrivateIP}
		}},
		{name: "other name, InternalIP", node: func(in cloudsim.Instance) testcluster.NodeSpec {
			return testcluster.NodeSpec{Name: "host-" + in.ID[4:], InternalIP: in.PrivateIP}
		}},
	}
}

func (tencentEnv) lookupCalls() int { return total(describeCalls()) }
func (tencentEnv) initBudget() int  { return 6 }

func (tencentEnv) faults() []faultCase {
	var out []faultCase
	for _, f := range []cloudsim.Fault{
		{Action: "*", ErrorRate: 1, ErrorCode: "InternalError"},
		{Action: "DescribeInstances", ErrorRate: 1, ErrorCode: "RequestLimitExceeded"},
		{Action: "*", ErrorRate: 1, HTTPStatus: 503},
		{Action: "DescribeInstances", ErrorRate: 1, ErrorCode: "AuthFailure.UnauthorizedOperation"},
	} {
		out = append(out, faultCase{name: fmt.Sprintf("%s-%s%d", f.Action, f.ErrorCode, f.HTTPStatus), faults: []cloudsim.Fault{f}})
	}
	return out
}

func (tencentEnv) badCredentials(*testing.T) []credentialCase {
	return []credentialCase{
		{name: "wrong key", config: writeCloudConfig(suite.dir, "cloud-wrong-key.yaml", secretID, "not-the-right-key"), wantCode: "AuthFailure.SignatureFailure"},
		{name: "unknown id", config: writeCloudConfig(suite.dir, "cloud-unknown-id.yaml", "AKIDunknown", secretKey), wantCode: "AuthFailure.SecretIdNotFound"},
	}
}

func (tencentEnv) malformedConfigs() []configCase {
	return []configCase{
		{"bad vpc", "region: ap-guangzhou\nvpc_id: 12345\nsecret_id: a\nsecret_key: b\n", "vpc_id"},
		{"missing region", "vpc_id: vpc-e2e00001\nsecret_id: a\nsecret_key: b\n", "region"},
		{"unknown key", "region: ap-guangzhou\nvpc_id: vpc-e2e00001\nsecret_id: a\nsecret_key: b\nvpcid: x\n", "vpcid"},
		{"bad endpoint", "region: ap-guangzhou\nvpc_id: vpc-e2e00001\nsecret_id: a\nsecret_key: b\napi_endpoint: ftp://x\n", "api_endpoint"},
	}
}

func (tencentEnv) startCCM(name, cloudConfig string, extraArgs ...string) (*testcluster.Process, error) {
	return startCCM(name, cloudConfig, extraArgs...)
}

func (tencentEnv) pause(t *testing.T) { pauseMainCCM(t) }

func (tencentEnv) leaksSecret(text string) bool { return strings.Contains(text, secretKey) }
