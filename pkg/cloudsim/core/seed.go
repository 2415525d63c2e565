package core

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// LoadSeed reads a seed file: YAML or JSON holding {"instances": [...]} (a
// bare list of instances is accepted too). Unknown fields are errors. The
// instances are not validated here; AddInstances does that.
func LoadSeed(path string) ([]Instance, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("seed %s: %w: %v", path, ErrInvalid, err)
	}
	in, err := DecodeInstances(js)
	if err != nil {
		return nil, fmt.Errorf("seed %s: %w", path, err)
	}
	return in, nil
}
