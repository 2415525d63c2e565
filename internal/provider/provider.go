// Package provider lists the cloud providers built into the
// cloud-controller-manager. Each provider is a package internal/provider/<dir>
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
	// EarlyStart is the package's const EarlyStart, false when it declares
	// none: the provider may be built, and primed, as soon as the flags are
	// parsed, before upstream's command generates its certificates
	// (cmd/cloud-controller-manager/earlystart.go). Only a provider whose
	// construction makes no call declares it.
	EarlyStart bool
}

// Lookup returns the provider named name.
func Lookup(name string) (Provider, bool) {
	for _, p := range All {
		if p.Name == name {
			return p, true
		}
	}
	return Provider{}, false
}

// Names lists the providers' names, in All's order (by name).
func Names() []string {
	names := make([]string, len(All))
	for i, p := range All {
		names[i] = p.Name
	}
	return names
}
