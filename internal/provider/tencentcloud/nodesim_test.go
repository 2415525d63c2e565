package tencentcloud

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ccmkit/ccm/internal/tencent/config"
	"github.com/ccmkit/ccm/internal/tencent/cvmlookup/cvmlookuptest"
	"github.com/ccmkit/ccm/pkg/cloudsim"
)

// The node tests run the provider's InstancesV2 against cloudsim in-process
// (cvmlookuptest): the real SDK, signed requests, the documented limits and
// faults. Answers no API model gives (malformed bodies) come from
// Recorder.AnswerWith.

const (
	testRegion = cvmlookuptest.Region
	testVPC    = cvmlookuptest.VPC
	otherVPC   = cvmlookuptest.OtherVPC
)

// startNodes runs cloudsim with the given instances (VPC testVPC and zone
// ap-guangzhou-3 unless set).
func startNodes(t *testing.T, in ...cloudsim.Instance) *cvmlookuptest.Env {
	t.Helper()
	env := cvmlookuptest.Start(t, nil)
	if len(in) > 0 {
		env.Add(t, in...)
	}
	return env
}

func newTestInstances(env *cvmlookuptest.Env) *instances { return newTestInstancesWith(env, nil) }

// newTestInstancesWith lets a test change the config first, e.g. to turn
// the inventory off or shorten its TTL.
func newTestInstancesWith(env *cvmlookuptest.Env, change func(*config.Config)) *instances {
	cfg := &config.Config{Region: testRegion, VpcID: testVPC, InstanceCacheTTL: config.DefaultInstanceCacheTTL}
	if change != nil {
		change(cfg)
	}
	return newCloud(cfg, env.API).instances
}

func testNode(name, providerID string, addrs ...v1.NodeAddress) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1.NodeSpec{ProviderID: providerID},
		Status:     v1.NodeStatus{Addresses: addrs},
	}
}

func internalIP(a string) v1.NodeAddress { return v1.NodeAddress{Type: v1.NodeInternalIP, Address: a} }
func hostnameAddr(a string) v1.NodeAddress {
	return v1.NodeAddress{Type: v1.NodeHostName, Address: a}
}

// Credentials of the right shape for tests that load a config.
const (
	testSecretID  = "AKIDtestsecretid0000000000000000000"
	testSecretKey = "testsecretkey000000000000000000k"
)
