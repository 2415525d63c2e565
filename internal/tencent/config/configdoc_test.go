package config

import (
	"reflect"
	"testing"

	"github.com/ccmkit/ccm/internal/cloudconfig"
)

// Every key of Config is documented, and nothing else is.
func TestConfigKeysDocumented(t *testing.T) {
	if err := cloudconfig.CheckDocumented(reflect.TypeFor[Config](), Keys); err != nil {
		t.Error(err)
	}
}
