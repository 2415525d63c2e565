package annotations

import (
	"strings"
	"testing"
	"time"
)

func TestBoolDescriptor(t *testing.T) {
	on := Bool{Name: testName, Default: true}
	tests := []struct {
		value     *string
		want      bool
		wantErr   string
		wantValue bool // Value: the default when unset or invalid
	}{
		{nil, false, "unset", true},
		{ptr("true"), true, "", true},
		{ptr("FALSE"), false, "", false},
		{ptr("1"), true, "", true},
		{ptr("yes"), false, `invalid value "yes": must be true or false`, true},
	}
	for _, tc := range tests {
		got, err := on.FromService(svcWith(tc.value))
		checkErr(t, err, tc.wantErr)
		if got != tc.want {
			t.Errorf("FromService(%v) = %v, want %v", tc.value, got, tc.want)
		}
		var p Problems
		if v := on.Value(svcWith(tc.value), &p); v != tc.wantValue || (len(p) > 0) != (tc.wantErr != "" && tc.wantErr != "unset") {
			t.Errorf("Value(%v) = %v with problems %v, want %v", tc.value, v, p, tc.wantValue)
		}
	}
}

func TestIntDescriptor(t *testing.T) {
	tests := []struct {
		value    *string
		min, max int
		want     int
		wantErr  string
	}{
		{nil, 0, 10, 0, "unset"},
		{ptr("7"), 0, 10, 7, ""},
		{ptr("-7"), 0, 0, -7, ""}, // no range
		{ptr(" 2 "), 2, 10, 2, ""},
		{ptr("11"), 2, 10, 0, `invalid value "11": must be between 2 and 10`},
		{ptr("1"), 2, 10, 0, "must be between 2 and 10"},
		{ptr("3.5"), 2, 10, 0, "must be an integer"},
	}
	for _, tc := range tests {
		got, err := Int{Name: testName, Min: tc.min, Max: tc.max}.FromService(svcWith(tc.value))
		checkErr(t, err, tc.wantErr)
		if got != tc.want {
			t.Errorf("FromService(%v) in [%d, %d] = %v, want %v", tc.value, tc.min, tc.max, got, tc.want)
		}
	}
	// FromServiceIn checks the caller's range instead of the descriptor's.
	if _, err := (Int{Name: testName, Min: 1, Max: 2}).FromServiceIn(svcWith(ptr("5")), 1, 10); err != nil {
		t.Errorf("FromServiceIn: %v", err)
	}
}

func TestDurationDescriptor(t *testing.T) {
	seconds := Duration{Name: testName}
	millis := Duration{Name: testName, Unit: time.Millisecond, Min: time.Second, Max: time.Minute}
	tests := []struct {
		d       Duration
		value   *string
		want    time.Duration
		wantErr string
	}{
		{seconds, nil, 0, "unset"},
		{seconds, ptr("10s"), 10 * time.Second, ""},
		{seconds, ptr("1m30s"), 90 * time.Second, ""},
		{seconds, ptr("30"), 30 * time.Second, ""},
		{seconds, ptr("-5s"), 0, "must not be negative"},
		{seconds, ptr("soon"), 0, `invalid value "soon": must be a duration such as 10s or 2m, or a number of seconds`},
		{Duration{Name: testName, Max: time.Hour}, ptr("2h"), 0, "must be between 0s and 1h0m0s"},
		{millis, ptr("5000"), 5 * time.Second, ""},
		{millis, ptr("10s"), 10 * time.Second, ""},
		{millis, ptr("500"), 0, `invalid value "500": must be between 1s and 1m0s`},
		{millis, ptr("-5"), 0, "must be between 1s and 1m0s"}, // as upstream's always did
		{millis, ptr("soon"), 0, "must be a number of milliseconds (as upstream) or a duration such as 10s"},
	}
	for _, tc := range tests {
		got, err := tc.d.FromService(svcWith(tc.value))
		checkErr(t, err, tc.wantErr)
		if got != tc.want {
			t.Errorf("FromService(%v) = %v, want %v", tc.value, got, tc.want)
		}
	}
}

func TestEnumDescriptor(t *testing.T) {
	e := Enum{Name: testName, Values: []string{"public", "private"}, Default: "public"}
	tests := []struct {
		value   *string
		want    string
		wantErr string
	}{
		{nil, "", "unset"},
		{ptr("private"), "private", ""},
		{ptr("Private"), "private", ""},
		{ptr("internal"), "", `invalid value "internal": must be one of public, private`},
	}
	for _, tc := range tests {
		got, err := e.FromService(svcWith(tc.value))
		checkErr(t, err, tc.wantErr)
		if got != tc.want {
			t.Errorf("FromService(%v) = %q, want %q", tc.value, got, tc.want)
		}
	}
	var p Problems
	if v := e.Value(svcWith(ptr("internal")), &p); v != "public" || len(p) != 1 {
		t.Errorf("Value(internal) = %q with problems %v, want the default and one problem", v, p)
	}
}

// The reference's Type and Default cells, as ./gen writes them.
func TestDescriptorDoc(t *testing.T) {
	tests := []struct {
		d                Descriptor
		wantTyp, wantDef string
	}{
		{Bool{Name: testName}, "bool", "false"},
		{Bool{Name: testName, DefaultDoc: "false (unless ...)"}, "bool", "false (unless ...)"},
		{Int{Name: testName, Default: 3}, "int", "3"},
		{Int{Name: testName, Unit: "Mbps", Min: 1, Max: 2048}, "int (Mbps, 1-2048)", "0"},
		{Int{Name: testName, Min: 1, Max: 2}, "int (1, 2)", "0"},
		{Duration{Name: testName, Default: 5 * time.Second}, "duration (10s, 1m, or seconds)", "5s"},
		{Duration{Name: testName, Max: time.Hour}, "duration (10s, 1m, or seconds; at most 1h)", "0s"},
		{Duration{Name: testName, Min: time.Second, Max: 90 * time.Minute}, "duration (10s, 1m, or seconds; 1s to 1h30m)", "0s"},
		{Duration{Name: testName, Unit: time.Millisecond, Min: time.Second, Max: 30 * time.Minute, Default: 5 * time.Second},
			"milliseconds (1000-1800000) or duration", "5000"},
		{Enum{Name: testName, Values: []string{"lb", "nlb"}, Default: "lb"}, "enum (lb, nlb)", "lb"},
		{Enum{Name: testName, Values: []string{"VIP", "Proxy"}}, "enum (VIP, Proxy)", "none"},
	}
	for _, tc := range tests {
		typ, def := tc.d.Doc()
		if typ != tc.wantTyp || def != tc.wantDef {
			t.Errorf("%#v: Doc() = %q, %q, want %q, %q", tc.d, typ, def, tc.wantTyp, tc.wantDef)
		}
	}
}

// A DefaultDoc must begin with the Default it explains.
func TestCheckDefaultDoc(t *testing.T) {
	tests := []struct {
		d       Descriptor
		wantErr string
	}{
		{Enum{Name: testName, Default: "public", DefaultDoc: "public, or private when ..."}, ""},
		{Enum{Name: testName, Default: "public", DefaultDoc: "private when ..."}, `does not begin with the Default public`},
		{Int{Name: testName, Default: 3, DefaultDoc: "5 (or ...)"}, "does not begin with the Default 3"},
		{Duration{Name: testName, Unit: time.Millisecond, Default: 5 * time.Second, DefaultDoc: "5000 (or ...)"}, ""},
		{Duration{Name: testName, Default: 5 * time.Second, DefaultDoc: "5000"}, "does not begin with the Default 5s"},
		{Bool{Name: testName, Default: true, DefaultDoc: "false"}, "does not begin with the Default true"},
		{Duration{Name: testName, DefaultDoc: "the cloud config's"}, ""}, // no Default: the caller's
	}
	for _, tc := range tests {
		err := Check(tc.d)
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%#v: Check() = %v, want %q", tc.d, err, tc.wantErr)
		}
	}
}
