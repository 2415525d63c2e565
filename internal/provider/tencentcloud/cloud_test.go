package tencentcloud

import (
	"strings"
	"testing"

	cloudprovider "k8s.io/cloud-provider"

	"github.com/ccmkit/ccm/internal/tencent/config"
)

func TestRegisteredProvider(t *testing.T) {
	clearTencentEnv(t)
	config := "region: ap-guangzhou\nvpc_id: vpc-aaaa1111\nsecret_id: id\nsecret_key: key\n"
	cloud, err := cloudprovider.GetCloudProvider(ProviderName, strings.NewReader(config))
	if err != nil {
		t.Fatal(err)
	}
	if cloud.ProviderName() != "tencentcloud" || !cloud.HasClusterID() {
		t.Errorf("ProviderName %q HasClusterID %v", cloud.ProviderName(), cloud.HasClusterID())
	}
	if _, ok := cloud.InstancesV2(); !ok {
		t.Error("InstancesV2 must be supported")
	}
	if _, ok := cloud.LoadBalancer(); !ok {
		t.Error("LoadBalancer must be supported")
	}
	unsupported := map[string]bool{}
	_, unsupported["Instances"] = cloud.Instances()
	_, unsupported["Zones"] = cloud.Zones()
	_, unsupported["Clusters"] = cloud.Clusters()
	_, unsupported["Routes"] = cloud.Routes()
	for name, ok := range unsupported {
		if ok {
			t.Errorf("%s() reports supported", name)
		}
	}
	cloud.Initialize(nil, nil) // must not panic
}

func TestRegisteredProviderBadConfig(t *testing.T) {
	clearTencentEnv(t)
	t.Setenv(config.EnvSecretKey, testSecretKey)
	_, err := cloudprovider.GetCloudProvider(ProviderName, nil)
	if err == nil {
		t.Fatal("want an error without region, vpc_id, secret_id")
	}
	for _, want := range []string{"region: required", "vpc_id: required", "secret_id: required"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), testSecretKey) {
		t.Errorf("secret in error: %v", err)
	}
}

func TestNewRejectsBadEndpoint(t *testing.T) {
	// config.Load validates api_endpoint; New checks again for a Config built in code.
	_, err := New(&config.Config{Region: "ap-guangzhou", VpcID: "vpc-aaaa1111", SecretID: "i", SecretKey: "k", APIEndpoint: "ftp://x"})
	if err == nil || !strings.Contains(err.Error(), "scheme must be http or https") {
		t.Errorf("error %v", err)
	}
}
