package cloudsim

import (
	"flag"

	"github.com/ccmkit/ccm/pkg/cloudsim/core"
	"github.com/ccmkit/ccm/pkg/cloudsim/oci"
	"github.com/ccmkit/ccm/pkg/cloudsim/tencent"
)

// registration is one dialect as Build and Options.AddFlags know it.
type registration struct {
	name string
	// build makes the dialect from its part of opts, on s's core and data
	// plane, and keeps its typed handle in s for the Sim's methods.
	build func(s *Sim, opts Options) (core.Dialect, error)
	// flags defines the dialect's command-line flags, writing into its
	// part of opts.
	flags func(opts *Options, fs *flag.FlagSet) core.FinishFlags
}

// registry holds every dialect, by name, in the order Build mounts them
// (and Close stops them in reverse). The patterns they serve must not
// overlap; Build panics (http.ServeMux does) if two do.
var registry = []registration{
	{
		name: tencent.DialectName,
		build: func(s *Sim, opts Options) (core.Dialect, error) {
			d, err := tencent.NewCloud(s.core, s.plane, opts.Tencent)
			s.tencent = d
			return d, err
		},
		flags: func(opts *Options, fs *flag.FlagSet) core.FinishFlags { return opts.Tencent.AddFlags(fs) },
	},
	{
		name: oci.DialectName,
		build: func(s *Sim, opts Options) (core.Dialect, error) {
			d, err := oci.New(s.core, s.plane, opts.OCI)
			s.oci = d
			return d, err
		},
		flags: func(opts *Options, fs *flag.FlagSet) core.FinishFlags { return opts.OCI.AddFlags(fs) },
	},
}

// Dialects names the registered dialects, in registry order.
func Dialects() []string {
	names := make([]string, len(registry))
	for i, r := range registry {
		names[i] = r.name
	}
	return names
}
