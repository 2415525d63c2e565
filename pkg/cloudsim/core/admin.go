package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// maxAdminBody bounds admin request bodies.
const maxAdminBody = 10 << 20

// AdminHandler serves the admin API under /admin/. It is unauthenticated:
// serve it on a loopback address only.
func (c *Core) AdminHandler() http.Handler { return c.adminMux }

// AdminFunc serves one admin request: the status and JSON body to answer,
// or an error (ErrNotFound: 404, ErrInvalid: 400, else 500).
type AdminFunc func(r *http.Request) (status int, body any, err error)

// HandleAdminFunc adds a route to the admin API, for dialects that need
// their own admin endpoints: every admin endpoint, the core's and each
// dialect's, answers and fails the same way. pattern is an http.ServeMux
// pattern whose path starts with /admin/<dialect>/, e.g.
// "GET /admin/oci/loadbalancers".
func (c *Core) HandleAdminFunc(pattern string, f AdminFunc) { c.adminMux.Handle(pattern, f) }

// ServeHTTP answers with what f returns: its status and body as JSON, or
// its error (see WriteAdminError).
func (f AdminFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	status, body, err := f(r)
	if err != nil {
		WriteAdminError(w, err)
		return
	}
	WriteAdmin(w, status, body)
}

// DecodeAdmin reads an admin request's JSON body into v: bounded, strict
// (unknown fields and trailing data are ErrInvalid).
func DecodeAdmin(r *http.Request, v any) error { return decodeStrict(r, v) }

// InstancesBody is the object form of a POST /admin/instances body and of a
// seed file.
type InstancesBody struct {
	Instances []Instance `json:"instances"`
}

// StateBody is the body of POST /admin/instances/{id}/state.
type StateBody struct {
	State string `json:"state"`
}

// RateLimitBody is the body of PUT /admin/ratelimits.
type RateLimitBody struct {
	Action string  `json:"action"`
	QPS    float64 `json:"qps"`
}

// ReadLagBody is the body of PUT /admin/readlag and the answer of GET:
// the maximum lag of List/Describe answers behind writes (lag.go), as a
// duration string ("10s"; "0s": off), and how many resources have writes
// reads do not see yet (answers only).
type ReadLagBody struct {
	Max     string `json:"max"`
	Pending int    `json:"pending,omitempty"`
}

// ErrorBody is the body of every admin error answer.
type ErrorBody struct {
	Error string `json:"error"`
}

func (c *Core) newAdminMux() *http.ServeMux {
	m := http.NewServeMux()
	h := func(pattern string, f AdminFunc) { m.Handle(pattern, f) }
	h("GET /admin/healthz", func(*http.Request) (int, any, error) {
		return http.StatusOK, map[string]string{"status": "ok"}, nil
	})
	h("GET /admin/instances", func(*http.Request) (int, any, error) { return http.StatusOK, c.Instances(), nil })
	h("POST /admin/instances", func(r *http.Request) (int, any, error) {
		raw, err := readBody(r)
		if err != nil {
			return 0, nil, err
		}
		in, err := DecodeInstances(raw)
		if err != nil {
			return 0, nil, err
		}
		out, err := c.AddInstances(in...)
		return http.StatusCreated, out, err
	})
	h("GET /admin/instances/{id}", func(r *http.Request) (int, any, error) {
		inst, err := c.Instance(r.PathValue("id"))
		return http.StatusOK, inst, err
	})
	h("POST /admin/instances/{id}/state", func(r *http.Request) (int, any, error) {
		var body StateBody
		if err := decodeStrict(r, &body); err != nil {
			return 0, nil, err
		}
		if body.State == "" {
			return 0, nil, fmt.Errorf("%w: body must be {\"state\": \"<STATE>\"}", ErrInvalid)
		}
		inst, err := c.SetInstanceState(r.PathValue("id"), body.State)
		return http.StatusOK, inst, err
	})
	h("POST /admin/instances/{id}/{op}", func(r *http.Request) (int, any, error) {
		states := map[string]string{"start": StateRunning, "stop": StateStopped, "terminate": StateTerminating}
		st, ok := states[r.PathValue("op")]
		if !ok {
			return http.StatusNotFound, ErrorBody{fmt.Sprintf("unknown instance operation %q (want state, start, stop or terminate)", r.PathValue("op"))}, nil
		}
		inst, err := c.SetInstanceState(r.PathValue("id"), st)
		return http.StatusOK, inst, err
	})
	h("GET /admin/faults", func(*http.Request) (int, any, error) { return http.StatusOK, c.Faults(), nil })
	h("PUT /admin/faults", func(r *http.Request) (int, any, error) {
		var f Fault
		if err := decodeStrict(r, &f); err != nil {
			return 0, nil, err
		}
		if err := f.Validate(); err != nil {
			return 0, nil, err
		}
		f = f.normalize()
		c.SetFault(f)
		return http.StatusOK, f, nil
	})
	h("DELETE /admin/faults", func(*http.Request) (int, any, error) {
		c.ClearFaults()
		return http.StatusNoContent, nil, nil
	})
	h("DELETE /admin/faults/{action}", func(r *http.Request) (int, any, error) {
		c.ClearFault(r.PathValue("action"))
		return http.StatusNoContent, nil, nil
	})
	h("GET /admin/readlag", func(*http.Request) (int, any, error) {
		return http.StatusOK, ReadLagBody{Max: c.lag.Max().String(), Pending: c.lag.Pending()}, nil
	})
	h("PUT /admin/readlag", func(r *http.Request) (int, any, error) {
		var body ReadLagBody
		if err := decodeStrict(r, &body); err != nil {
			return 0, nil, err
		}
		d, err := time.ParseDuration(body.Max)
		if err != nil {
			return 0, nil, fmt.Errorf("%w: max %q must be a duration like \"10s\" (\"0s\": off)", ErrInvalid, body.Max)
		}
		if err := c.lag.Set(d); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, ReadLagBody{Max: d.String()}, nil
	})
	h("GET /admin/calls", func(*http.Request) (int, any, error) { return http.StatusOK, c.Calls(), nil })
	h("GET /admin/calls/recent", func(*http.Request) (int, any, error) { return http.StatusOK, c.RecentCalls(), nil })
	h("DELETE /admin/calls", func(*http.Request) (int, any, error) {
		c.ResetCalls()
		return http.StatusNoContent, nil, nil
	})
	h("GET /admin/ratelimits", func(*http.Request) (int, any, error) { return http.StatusOK, c.RateLimits(), nil })
	h("PUT /admin/ratelimits", func(r *http.Request) (int, any, error) {
		var body RateLimitBody
		if err := decodeStrict(r, &body); err != nil {
			return 0, nil, err
		}
		if body.Action == "" {
			return 0, nil, fmt.Errorf("%w: body must be {\"action\": \"<Action>\", \"qps\": <n>} (qps <= 0 disables the limit)", ErrInvalid)
		}
		c.SetRateLimit(body.Action, body.QPS)
		return http.StatusOK, c.RateLimits(), nil
	})
	h("/admin/", func(r *http.Request) (int, any, error) {
		return http.StatusNotFound, ErrorBody{fmt.Sprintf("no admin endpoint %s %s", r.Method, r.URL.Path)}, nil
	})
	return m
}

// DecodeInstances decodes JSON that is an array of instances, an object
// {"instances": [...]}, or a single instance object. Unknown fields are
// errors.
func DecodeInstances(raw []byte) ([]Instance, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%w: empty body: want an array of instances or {\"instances\": [...]}", ErrInvalid)
	}
	if trimmed[0] == '[' {
		var in []Instance
		if err := unmarshalStrict(trimmed, &in); err != nil {
			return nil, err
		}
		return in, nil
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("%w: want an array of instances or {\"instances\": [...]}", ErrInvalid)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &probe); err != nil {
		return nil, fmt.Errorf("%w: malformed JSON: %v", ErrInvalid, err)
	}
	if _, ok := probe["instances"]; ok {
		var body InstancesBody
		if err := unmarshalStrict(trimmed, &body); err != nil {
			return nil, err
		}
		return body.Instances, nil
	}
	var one Instance
	if err := unmarshalStrict(trimmed, &one); err != nil {
		return nil, err
	}
	return []Instance{one}, nil
}

func readBody(r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxAdminBody+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading body: %v", ErrInvalid, err)
	}
	if len(raw) > maxAdminBody {
		return nil, fmt.Errorf("%w: body larger than %d bytes", ErrInvalid, maxAdminBody)
	}
	return raw, nil
}

func decodeStrict(r *http.Request, v any) error {
	raw, err := readBody(r)
	if err != nil {
		return err
	}
	return unmarshalStrict(raw, v)
}

func unmarshalStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: malformed JSON body: %v", ErrInvalid, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: malformed JSON body: trailing data after the JSON value", ErrInvalid)
	}
	return nil
}

// WriteAdminError answers an admin request with err: ErrNotFound is 404,
// ErrInvalid 400, anything else 500, with an ErrorBody.
func WriteAdminError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(err, ErrInvalid):
		status = http.StatusBadRequest
	}
	WriteAdmin(w, status, ErrorBody{err.Error()})
}

// WriteAdmin answers an admin request with v as indented JSON; 204 has no
// body.
func WriteAdmin(w http.ResponseWriter, status int, v any) {
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
