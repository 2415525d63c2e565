package core

import (
	"net/http"
)

// Dialect is one cloud's API as package cloudsim mounts it: built on the
// shared Core (and data plane) from its own options, it serves the
// requests its Patterns match, has added its admin routes (under
// /admin/<name>/, with HandleAdminFunc) to the Core when it was built, and
// stops its background work (tasks, work requests) on Close.
type Dialect interface {
	http.Handler
	// Name is the dialect's name: CallInfo.Dialect, the key of its
	// default latency, and its entry in cloudsim's registry.
	Name() string
	// Patterns are the http.ServeMux patterns of its API, e.g. "/{$}"
	// (the root only) or "/20160918/" (a version prefix). No two dialects
	// may claim the same pattern, nor /admin/.
	Patterns() []string
	// Close stops the dialect's background work. The data plane it was
	// given is not its own: the caller closes that.
	Close()
}

// FinishFlags completes a dialect's command-line options after the flag
// set is parsed: it checks the values, reads the files and environment
// variables they name, and turns flag conventions into the options'
// (e.g. "0: at once" into a negative duration, as the options read 0 as
// "the default"). getenv is os.Getenv in cmd/cloudsim.
type FinishFlags func(getenv func(string) string) error
