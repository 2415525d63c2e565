package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// maxAdminBody bounds admin request bodies.
const maxAdminBody = 10 << 20

// AdminHandler serves the admin API under /admin/. It is unauthenticated:
// serve it on a loopback address only.
func (c *Core) AdminHandler() http.Handler { return c.adminMux }

// HandleAdmin adds a route to the admin API, for dialects and data planes
// that need their own admin endpoints. pattern is an http.ServeMux pattern
// whose path starts with /admin/, e.g. "GET /admin/loadbalancers".
func (c *Core) HandleAdmin(pattern string, h http.Handler) { c.adminMux.Handle(pattern, h) }

// AdminFunc serves one admin request: the status and JSON body to answer,
// or an error (ErrNotFound: 404, ErrInvalid: 400, else 500).
type AdminFunc func(r *http.Request) (status int, body any, err error)

// HandleAdminFunc adds an AdminFunc route to the admin API: every dialect's
// admin endpoints answer and fail the same way.
func (c *Core) HandleAdminFunc(pattern string, f AdminFunc) {
	c.HandleAdmin(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, body, err := f(r)
		if err != nil {
			WriteAdminError(w, err)
			return
		}
		WriteAdmin(w, status, body)
	}))
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

// ErrorBody is the body of every admin error answer.
type ErrorBody struct {
	Error string `json:"error"`
}

func (c *Core) newAdminMux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /admin/healthz", func(w http.ResponseWriter, r *http.Request) {
		WriteAdmin(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	m.HandleFunc("GET /admin/instances", func(w http.ResponseWriter, r *http.Request) {
		WriteAdmin(w, http.StatusOK, c.Instances())
	})
	m.HandleFunc("POST /admin/instances", c.adminAddInstances)
	m.HandleFunc("GET /admin/instances/{id}", func(w http.ResponseWriter, r *http.Request) {
		inst, err := c.Instance(r.PathValue("id"))
		if err != nil {
			WriteAdminError(w, err)
			return
		}
		WriteAdmin(w, http.StatusOK, inst)
	})
	m.HandleFunc("POST /admin/instances/{id}/state", func(w http.ResponseWriter, r *http.Request) {
		var body StateBody
		if err := decodeStrict(r, &body); err != nil {
			WriteAdminError(w, err)
			return
		}
		if body.State == "" {
			WriteAdminError(w, fmt.Errorf("%w: body must be {\"state\": \"<STATE>\"}", ErrInvalid))
			return
		}
		c.adminSetState(w, r.PathValue("id"), body.State)
	})
	m.HandleFunc("POST /admin/instances/{id}/{op}", func(w http.ResponseWriter, r *http.Request) {
		states := map[string]string{"start": StateRunning, "stop": StateStopped, "terminate": StateTerminating}
		st, ok := states[r.PathValue("op")]
		if !ok {
			WriteAdmin(w, http.StatusNotFound, ErrorBody{fmt.Sprintf("unknown instance operation %q (want state, start, stop or terminate)", r.PathValue("op"))})
			return
		}
		c.adminSetState(w, r.PathValue("id"), st)
	})
	m.HandleFunc("GET /admin/faults", func(w http.ResponseWriter, r *http.Request) {
		WriteAdmin(w, http.StatusOK, c.Faults())
	})
	m.HandleFunc("PUT /admin/faults", func(w http.ResponseWriter, r *http.Request) {
		var f Fault
		if err := decodeStrict(r, &f); err != nil {
			WriteAdminError(w, err)
			return
		}
		if err := f.Validate(); err != nil {
			WriteAdminError(w, err)
			return
		}
		f = f.normalize()
		c.SetFault(f)
		WriteAdmin(w, http.StatusOK, f)
	})
	m.HandleFunc("DELETE /admin/faults", func(w http.ResponseWriter, r *http.Request) {
		c.ClearFaults()
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("DELETE /admin/faults/{action}", func(w http.ResponseWriter, r *http.Request) {
		c.ClearFault(r.PathValue("action"))
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("GET /admin/calls", func(w http.ResponseWriter, r *http.Request) {
		WriteAdmin(w, http.StatusOK, c.Calls())
	})
	m.HandleFunc("DELETE /admin/calls", func(w http.ResponseWriter, r *http.Request) {
		c.ResetCalls()
		w.WriteHeader(http.StatusNoContent)
	})
	m.HandleFunc("GET /admin/ratelimits", func(w http.ResponseWriter, r *http.Request) {
		WriteAdmin(w, http.StatusOK, c.RateLimits())
	})
	m.HandleFunc("PUT /admin/ratelimits", func(w http.ResponseWriter, r *http.Request) {
		var body RateLimitBody
		if err := decodeStrict(r, &body); err != nil {
			WriteAdminError(w, err)
			return
		}
		if body.Action == "" {
			WriteAdminError(w, fmt.Errorf("%w: body must be {\"action\": \"<Action>\", \"qps\": <n>} (qps <= 0 disables the limit)", ErrInvalid))
			return
		}
		c.SetRateLimit(body.Action, body.QPS)
		WriteAdmin(w, http.StatusOK, c.RateLimits())
	})
	m.HandleFunc("/admin/", func(w http.ResponseWriter, r *http.Request) {
		WriteAdmin(w, http.StatusNotFound, ErrorBody{fmt.Sprintf("no admin endpoint %s %s", r.Method, r.URL.Path)})
	})
	return m
}

func (c *Core) adminAddInstances(w http.ResponseWriter, r *http.Request) {
	raw, err := readBody(r)
	if err != nil {
		WriteAdminError(w, err)
		return
	}
	in, err := DecodeInstances(raw)
	if err != nil {
		WriteAdminError(w, err)
		return
	}
	out, err := c.AddInstances(in...)
	if err != nil {
		WriteAdminError(w, err)
		return
	}
	WriteAdmin(w, http.StatusCreated, out)
}

func (c *Core) adminSetState(w http.ResponseWriter, id, state string) {
	inst, err := c.SetInstanceState(id, state)
	if err != nil {
		WriteAdminError(w, err)
		return
	}
	WriteAdmin(w, http.StatusOK, inst)
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
