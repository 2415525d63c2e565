package cloudconfig

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Error lists every problem found in a cloud config.
type Error struct {
	// Cloud prefixes the message: "tencentcloud config: ...".
	Cloud    string
	Problems []error
	// secrets are scrubbed from Error() as a whole, since a secret could
	// also span the joins between problems. They sit behind a pointer so
	// that fmt, printing an Error value by reflection, shows an address.
	secrets *[]string
}

// GoString keeps %#v to the scrubbed message; the default would print the
// remembered secrets.
func (e *Error) GoString() string { return "&cloudconfig.Error{" + strconv.Quote(e.Error()) + "}" }

func (e *Error) secretList() []string {
	if e.secrets == nil {
		return nil
	}
	return *e.secrets
}

// Error implements error. One problem reads as a plain message; several
// are numbered on one line so that the single klog line the CCM exits with
// shows them all.
func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return Scrub(e.Cloud+" config: "+e.Problems[0].Error(), e.secretList())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s config: %d problems:", e.Cloud, len(e.Problems))
	for i, p := range e.Problems {
		fmt.Fprintf(&b, " (%d) %v;", i+1, p)
	}
	return Scrub(strings.TrimSuffix(b.String(), ";"), e.secretList())
}

// Unwrap lets errors.Is/As see the individual problems (e.g. fs.ErrNotExist).
func (e *Error) Unwrap() []error { return e.Problems }

// Problems accumulates problems while a config is read, so that all are
// reported at once, and remembers every secret seen so that none of them
// reaches a message (messages quote user input, and a user could have
// pasted a secret into the wrong key).
type Problems struct {
	list    []error
	secrets []string
}

// Addf records a problem; %w keeps the cause visible to errors.Is/As.
func (p *Problems) Addf(format string, args ...any) {
	p.list = append(p.list, fmt.Errorf(format, args...))
}

// Len is the number of problems so far.
func (p *Problems) Len() int { return len(p.list) }

// Remember records a secret value for scrubbing: the value, trimmed, and
// each long line of it, since a PEM key could be quoted one line at a time.
func (p *Problems) Remember(v string) {
	if strings.TrimSpace(v) == "" {
		return
	}
	p.secrets = append(p.secrets, v, strings.TrimSpace(v))
	for line := range strings.SplitSeq(v, "\n") {
		line = strings.TrimSpace(line)
		if len(line) >= 16 && !strings.HasPrefix(line, "-----") {
			p.secrets = append(p.secrets, line)
		}
	}
}

// Err returns nil, or an *Error for cloud with every remembered secret
// scrubbed from every message.
func (p *Problems) Err(cloud string) error {
	if len(p.list) == 0 {
		return nil
	}
	out := make([]error, len(p.list))
	for i, e := range p.list {
		msg := e.Error()
		if clean := Scrub(msg, p.secrets); clean != msg {
			out[i] = errors.New(clean)
		} else {
			out[i] = e
		}
	}
	secrets := slices.Clone(p.secrets)
	return &Error{Cloud: cloud, Problems: out, secrets: &secrets}
}

// MinScrubLen: shorter "secrets" are not scrubbed, because they would
// mangle ordinary words and no real credential is that short.
const MinScrubLen = 4

// hiddenMessage replaces a message that scrubbing could not clean.
const hiddenMessage = "(message hidden because it would reveal a secret)"

// Scrub replaces every secret in msg by [redacted]. If that is not enough
// (the marker itself, joined with its neighbors, can spell a contrived
// secret), the message is replaced by one that cannot contain a secret.
func Scrub(msg string, secrets []string) string {
	for _, s := range secrets {
		if len(s) >= MinScrubLen {
			msg = strings.ReplaceAll(msg, s, Redacted)
		}
	}
	for _, fallback := range []string{hiddenMessage, "***"} {
		if !containsSecret(msg, secrets) {
			return msg
		}
		msg = fallback // "***" is shorter than MinScrubLen
	}
	return msg
}

func containsSecret(msg string, secrets []string) bool {
	for _, s := range secrets {
		if len(s) >= MinScrubLen && strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
