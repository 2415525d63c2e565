package lbkit

import (
	"context"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestSecretReader(t *testing.T) {
	sec := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cert"}, Data: map[string][]byte{"k": []byte("v")}}
	withClient := &SecretReader{}
	withClient.Use(fake.NewClientset(sec))
	failing := &SecretReader{}
	boom := errors.New("boom")
	failing.UseGetter(func(context.Context, string, string) (*v1.Secret, error) { return nil, boom })
	tests := []struct {
		name    string
		r       *SecretReader
		secret  string
		wantErr error
	}{
		{"nil reader", nil, "cert", ErrNoClient},
		{"no client yet", &SecretReader{}, "cert", ErrNoClient},
		{"found through the client", withClient, "cert", nil},
		{"the getter's error", failing, "cert", boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.r.Get("default", tt.secret)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Get error = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && string(got.Data["k"]) != "v" {
				t.Fatalf("Get = %v, want the Secret's data", got.Data)
			}
		})
	}
	if _, err := withClient.Get("default", "missing"); err == nil {
		t.Fatal("Get of a missing Secret: no error")
	}
}
