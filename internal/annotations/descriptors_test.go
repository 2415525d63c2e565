package annotations

import "testing"

// Every descriptor declared passes Check and is listed once.
func TestDescriptors(t *testing.T) {
	seen := map[Name]bool{}
	for _, d := range Descriptors() {
		if err := Check(d); err != nil {
			t.Error(err)
		}
		if seen[d.Key()] {
			t.Errorf("%s is listed twice", d.Key())
		}
		seen[d.Key()] = true
	}
}
