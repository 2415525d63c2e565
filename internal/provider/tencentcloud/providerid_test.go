package tencentcloud

import (
	"strings"
	"testing"
)

func TestParseProviderID(t *testing.T) {
	tests := []struct {
		in       string
		zone, id string
		wantErr  string
	}{
		{in: "tencentcloud:///ap-guangzhou-3/ins-dyzp06q6", zone: "ap-guangzhou-3", id: "ins-dyzp06q6"},
		{in: "qcloud:///100003/ins-dyzp06q6", zone: "100003", id: "ins-dyzp06q6"},
		{in: "qcloud:///ap-shanghai-fsi-1/ins-abcdefgh", zone: "ap-shanghai-fsi-1", id: "ins-abcdefgh"},
		{in: "ins-12345678", id: "ins-12345678"},

		{in: "aws:///x", wantErr: `providerID "aws:///x": not a Tencent Cloud providerID (want tencentcloud:///<zone>/<ins-id>)`},
		{in: "", wantErr: "not a Tencent Cloud providerID"},
		{in: "tencentcloud://ins-12345678", wantErr: "not a Tencent Cloud providerID"},
		{in: "TENCENTCLOUD:///ap-guangzhou-3/ins-12345678", wantErr: "not a Tencent Cloud providerID"},
		{in: "tencentcloud:///ins-12345678", wantErr: "want tencentcloud:///<zone>/<ins-id>"},
		{in: "tencentcloud:////ins-12345678", wantErr: `zone ""`},
		{in: "tencentcloud:///ap-guangzhou-3/ins-1234567", wantErr: `instance id "ins-1234567"`},
		{in: "tencentcloud:///ap-guangzhou-3/ins-ABCDEFGH", wantErr: "8 lowercase"},
		{in: "tencentcloud:///ap-guangzhou-3/ins-12345678/", wantErr: "instance id"},
		{in: "tencentcloud:///ap-guangzhou-3/x/ins-12345678", wantErr: "instance id"},
		{in: "tencentcloud:///ap guangzhou/ins-12345678", wantErr: "zone"},
		{in: "qcloud:///-1/ins-12345678", wantErr: "zone"},
		{in: "ins-1234567", wantErr: "not a Tencent Cloud providerID"},
		{in: " ins-12345678", wantErr: "not a Tencent Cloud providerID"},
		{in: "lhins-12345678", wantErr: "not a Tencent Cloud providerID"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseProviderID(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Zone != tt.zone || got.InstanceID != tt.id {
				t.Errorf("got %+v, want zone %q id %q", got, tt.zone, tt.id)
			}
		})
	}
}

func TestFormatProviderID(t *testing.T) {
	if got := formatProviderID("ap-guangzhou-3", "ins-dyzp06q6"); got != "tencentcloud:///ap-guangzhou-3/ins-dyzp06q6" {
		t.Errorf("got %q", got)
	}
}

// FuzzParseProviderID: never panics; whatever parses names a valid instance
// id, and formatting what was parsed parses back to the same thing.
func FuzzParseProviderID(f *testing.F) {
	for _, s := range []string{
		"tencentcloud:///ap-guangzhou-3/ins-dyzp06q6", "qcloud:///100003/ins-dyzp06q6",
		"ins-12345678", "aws:///x", "", "tencentcloud:///", "tencentcloud:////ins-12345678",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseProviderID(s)
		if err != nil {
			if p != (parsedProviderID{}) {
				t.Fatalf("error %v with non-zero result %+v", err, p)
			}
			return
		}
		if !isInstanceID(p.InstanceID) {
			t.Fatalf("%q: parsed invalid instance id %q", s, p.InstanceID)
		}
		if p.Zone == "" {
			if s != p.InstanceID {
				t.Fatalf("%q: no zone but not a bare id", s)
			}
			return
		}
		formatted := formatProviderID(p.Zone, p.InstanceID)
		if strings.HasPrefix(s, providerIDPrefix) && formatted != s {
			t.Fatalf("round trip %q -> %+v -> %q", s, p, formatted)
		}
		again, err := parseProviderID(formatted)
		if err != nil || again != p {
			t.Fatalf("reparse %q = %+v, %v; want %+v", formatted, again, err, p)
		}
	})
}
