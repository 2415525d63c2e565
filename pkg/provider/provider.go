// Package provider lists the cloud providers built into the
// cloud-controller-manager. Each provider is a package pkg/provider/<dir>
// that registers itself with cloudprovider and internal/preflight in its
// init function and declares ProviderName, ConfigFile and ConfigType;
// zz_generated.providers.go, written by `make generate`
// (go run ./hack/registrygen), lists every such package in All, so that a
// new provider needs no hand-written registration anywhere.
package provider

import "reflect"

// Provider is one provider package as the rest of the tree needs it.
type Provider struct {
	// Name is --cloud-provider and the providerID scheme (ProviderName).
	Name string
	// ConfigFile is the cloud config's usual file name: the chart's
	// default Secret key (templates/_providers.tpl is generated from it).
	ConfigFile string
	// ConfigType is the cloud config's struct type: hack/configdoc renders
	// docs/configuration.md's table under the section "<Name> keys" from
	// the doc comments of its fields (see cloudconfig.KeyDoc).
	ConfigType reflect.Type
}

// Names lists the providers' names, in All's order (by name).
func Names() []string {
	names := make([]string, len(All))
	for i, p := range All {
		names[i] = p.Name
	}
	return names
}
