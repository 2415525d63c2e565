package report

// AllMet reports whether every target of a section is met (true for none).
func AllMet(targets map[string]bool) bool {
	for _, ok := range targets {
		if !ok {
			return false
		}
	}
	return true
}
