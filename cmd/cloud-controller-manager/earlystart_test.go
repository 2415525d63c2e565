package main

import (
	"io"
	"testing"

	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/options"

	"github.com/ccmkit/ccm/internal/cloudbase"
)

// earlyTestCloud counts how often it was built and primed.
type earlyTestCloud struct {
	cloudbase.V2Only
	primed int
}

func (*earlyTestCloud) Initialize(cloudprovider.ControllerClientBuilder, <-chan struct{}) {}
func (*earlyTestCloud) LoadBalancer() (cloudprovider.LoadBalancer, bool)                  { return nil, false }
func (*earlyTestCloud) InstancesV2() (cloudprovider.InstancesV2, bool)                    { return nil, false }
func (*earlyTestCloud) Routes() (cloudprovider.Routes, bool)                              { return nil, false }
func (*earlyTestCloud) ProviderName() string                                              { return "early-test" }
func (c *earlyTestCloud) Prime()                                                          { c.primed++ }

var earlyTestBuilt []*earlyTestCloud

func init() {
	cloudprovider.RegisterCloudProvider("early-test", func(io.Reader) (cloudprovider.Interface, error) {
		c := &earlyTestCloud{}
		earlyTestBuilt = append(earlyTestBuilt, c)
		return c, nil
	})
}

// The provider is built and primed as soon as the flags are parsed only
// when this process leads at once and the provider declares EarlyStart;
// initCloud then gets that one, once.
func TestEarlyCloud(t *testing.T) {
	declared := earlyStart
	earlyStart = func(name string) bool { return name == "early-test" || declared(name) }
	t.Cleanup(func() { earlyStart = declared })
	// The generated list: tencentcloud declares EarlyStart, OCI does not.
	if !declared("tencentcloud") || declared("oci") || declared("no-such-cloud") {
		t.Errorf("EarlyStart: tencentcloud %v, oci %v, no-such-cloud %v; want true, false, false",
			declared("tencentcloud"), declared("oci"), declared("no-such-cloud"))
	}
	tests := []struct {
		name        string
		provider    string
		leaderElect bool
		wantEarly   bool
	}{
		{name: "no leader election: built and primed", provider: "early-test", wantEarly: true},
		{name: "leader election: the leader primes in Initialize", provider: "early-test", leaderElect: true},
		{name: "a provider that does not declare EarlyStart (OCI)", provider: "oci"},
		{name: "an unknown provider is left to initCloud's error", provider: "no-such-cloud"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			earlyTestBuilt = nil
			opts, err := options.NewCloudControllerManagerOptions()
			if err != nil {
				t.Fatal(err)
			}
			opts.KubeCloudShared.CloudProvider.Name = tt.provider
			opts.Generic.LeaderElection.LeaderElect = tt.leaderElect
			e := &earlyCloud{}
			e.start(opts)
			got := e.take()
			if (got != nil) != tt.wantEarly {
				t.Fatalf("early cloud %v, want one: %v", got, tt.wantEarly)
			}
			if !tt.wantEarly {
				if len(earlyTestBuilt) != 0 {
					t.Errorf("built %d providers early, want none", len(earlyTestBuilt))
				}
				return
			}
			if len(earlyTestBuilt) != 1 || earlyTestBuilt[0] != got || earlyTestBuilt[0].primed != 1 {
				t.Errorf("built %d providers (primed: %v), want the one handed over, primed once", len(earlyTestBuilt), earlyTestBuilt)
			}
			if again := e.take(); again != nil {
				t.Errorf("take handed the early cloud over twice")
			}
		})
	}
}
