package main

// versionRequested reports whether args ask for --version. Upstream's flag
// of that name prints the Kubernetes library version, which says nothing
// about this binary; we answer with ours (internal/buildinfo) instead.
// --version=false is upstream's default and asks for nothing.
func versionRequested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--version", "--version=true", "--version=raw":
			return true
		}
	}
	return false
}
