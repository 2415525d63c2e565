package cloudsim

import (
	"flag"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
)

// registration is one dialect as Build and Options.AddFlags know it. The
// registry itself, one entry per dialect package (the package whose
// constructor carries //cloudsim:dialect), is written by `make generate`
// into zz_generated.dialects.go, with the Sim's typed handles and the
// Options fields' types.
type registration struct {
	name string
	// build makes the dialect from its part of opts, on s's core and data
	// plane, and keeps its typed handle in s for the Sim's accessor.
	build func(s *Sim, opts Options) (core.Dialect, error)
	// flags defines the dialect's command-line flags, writing into its
	// part of opts.
	flags func(opts *Options, fs *flag.FlagSet) core.FinishFlags
}

// Dialects names the registered dialects, in registry order.
func Dialects() []string {
	names := make([]string, len(registry))
	for i, r := range registry {
		names[i] = r.name
	}
	return names
}
