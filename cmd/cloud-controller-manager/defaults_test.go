package main

import (
	"fmt"
	"testing"

	"k8s.io/cloud-provider/options"
)

// The binary's defaults are the measured ones, shown in --help, and a flag
// still overrides each.
func TestMeasuredDefaults(t *testing.T) {
	tests := []struct {
		flag, def, override string
		value               func(*options.CloudControllerManagerOptions) any
	}{
		{"kube-api-qps", "1000", "5", func(o *options.CloudControllerManagerOptions) any { return o.Generic.ClientConnection.QPS }},
		{"kube-api-burst", "2000", "7", func(o *options.CloudControllerManagerOptions) any { return o.Generic.ClientConnection.Burst }},
		{"concurrent-node-syncs", "100", "3", func(o *options.CloudControllerManagerOptions) any { return o.NodeController.ConcurrentNodeSyncs }},
		{"concurrent-node-lifecycle-syncs", "100", "4", func(o *options.CloudControllerManagerOptions) any {
			return o.NodeLifecycleController.ConcurrentNodeLifecycleSyncs
		}},
		{"concurrent-service-syncs", "20", "2", func(o *options.CloudControllerManagerOptions) any {
			return o.ServiceController.ConcurrentServiceSyncs
		}},
		{"webhook-secure-port", "0", "10260", func(o *options.CloudControllerManagerOptions) any { return o.WebhookServing.BindPort }},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			opts, err := options.NewCloudControllerManagerOptions()
			if err != nil {
				t.Fatal(err)
			}
			cmd := newCommand(opts)
			f := cmd.Flags().Lookup(tt.flag)
			if f == nil || f.DefValue != tt.def {
				t.Fatalf("--%s default = %v, want %s", tt.flag, f, tt.def)
			}
			if err := cmd.Flags().Parse([]string{"--" + tt.flag + "=" + tt.override}); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(tt.value(opts)); got != tt.override {
				t.Errorf("after --%s=%s: flag value %s, option %v", tt.flag, tt.override, f.Value, got)
			}
		})
	}
}
