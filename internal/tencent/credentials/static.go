package credentials

import (
	"context"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
)

// Static is a key pair given in the config or the environment: it never
// changes while the process runs.
type Static struct {
	SecretID, SecretKey string
}

// Name implements Source.
func (s Static) Name() string { return ccmmetrics.SourceStaticKey }

// Describe implements Source.
func (s Static) Describe() string { return "a key (secret_id, secret_key)" }

// Fetch implements Source.
func (s Static) Fetch(context.Context) (Value, error) {
	return Value{SecretID: s.SecretID, SecretKey: s.SecretKey}, nil
}
