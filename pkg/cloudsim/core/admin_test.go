package core

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Every dialect's admin endpoints answer through HandleAdminFunc, so its
// status mapping and body decoding are the admin API's contract.
func TestHandleAdminFunc(t *testing.T) {
	type thing struct {
		Name string `json:"name"`
	}
	c := New(Config{})
	c.HandleAdminFunc("POST /admin/test/things", func(r *http.Request) (int, any, error) {
		var in thing
		if err := DecodeAdmin(r, &in); err != nil {
			return 0, nil, err
		}
		switch in.Name {
		case "missing":
			return 0, nil, fmt.Errorf("%w: thing %q", ErrNotFound, in.Name)
		case "broken":
			return 0, nil, errors.New("disk on fire")
		case "gone":
			return http.StatusNoContent, nil, nil
		}
		return http.StatusCreated, in, nil
	})
	tests := []struct {
		body       string
		wantStatus int
		wantBody   string
	}{
		{`{"name":"a"}`, http.StatusCreated, `"name": "a"`},
		{`{"name":"missing"}`, http.StatusNotFound, `"error": "not found: thing \"missing\""`},
		{`{"name":"broken"}`, http.StatusInternalServerError, `"error": "disk on fire"`},
		{`{"name":"gone"}`, http.StatusNoContent, ""},
		{`{"nam":"a"}`, http.StatusBadRequest, `unknown field \"nam\"`},
		{`{"name":"a"} {}`, http.StatusBadRequest, "trailing data"},
	}
	for _, tc := range tests {
		t.Run(tc.body, func(t *testing.T) {
			rec := httptest.NewRecorder()
			c.AdminHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/admin/test/things", strings.NewReader(tc.body)))
			if rec.Code != tc.wantStatus {
				t.Errorf("status = %d, want %d (body %s)", rec.Code, tc.wantStatus, rec.Body)
			}
			if got := rec.Body.String(); (tc.wantBody == "") != (got == "") || !strings.Contains(got, tc.wantBody) {
				t.Errorf("body = %q, want it to contain %q", got, tc.wantBody)
			}
		})
	}
}
