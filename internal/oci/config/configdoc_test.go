package config_test

import (
	"reflect"
	"testing"

	"github.com/ccmkit/ccm/internal/cloudconfig"
	"github.com/ccmkit/ccm/internal/oci/config"
)

// Every key of config.Config is documented, and nothing else is.
func TestConfigKeysDocumented(t *testing.T) {
	if err := cloudconfig.CheckDocumented(reflect.TypeFor[config.Config](), config.Keys); err != nil {
		t.Error(err)
	}
}
