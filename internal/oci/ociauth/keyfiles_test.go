package ociauth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccmkit/ccm/internal/testcluster/secretvolume"
)

var (
	keysOnce sync.Once
	keys     [3]*rsa.PrivateKey
)

// testKeys are three RSA keys shared by the tests (generation is slow
// under -race).
func testKeys(t *testing.T) [3]*rsa.PrivateKey {
	t.Helper()
	keysOnce.Do(func() {
		for i := range keys {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			keys[i] = k
		}
	})
	return keys
}

func keyPEM(k *rsa.PrivateKey) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
}

func secretFiles(k *rsa.PrivateKey, fp string) map[string][]byte {
	return map[string][]byte{"key.pem": keyPEM(k), "fingerprint": []byte(fp + "\n")}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A mounted Secret's files swapped as the kubelet swaps them: the new key
// is used once the whole set is consistent; a set whose fingerprint is
// not the key's is never used.
func TestKeyFilesFollowTheSecret(t *testing.T) {
	k := testKeys(t)
	vol, err := secretvolume.New(filepath.Join(t.TempDir(), "oci"), secretFiles(k[0], Fingerprint(&k[0].PublicKey)))
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewKeyFiles(KeyFilesOptions{Tenancy: "ocid1.tenancy.oc1..t", User: "ocid1.user.oc1..u",
		KeyFile: vol.Path("key.pem"), FingerprintFile: vol.Path("fingerprint"), Settle: 20 * time.Millisecond, Poll: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	failures := make(chan error, 10)
	src.reloaded = func(_ bool, err error) {
		if err != nil {
			failures <- err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go src.Run(ctx)
	keyID := func() string {
		c, _ := src.Credential(ctx)
		return c.KeyID
	}
	if want := "ocid1.tenancy.oc1..t/ocid1.user.oc1..u/" + Fingerprint(&k[0].PublicKey); keyID() != want {
		t.Fatalf("keyId %s, want %s", keyID(), want)
	}

	// A key whose fingerprint file names another key: refused, the old key
	// stays.
	if err := vol.Update(secretFiles(k[1], Fingerprint(&k[2].PublicKey))); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-failures:
		if !strings.Contains(err.Error(), "is not the fingerprint of the key") {
			t.Fatalf("the mismatched set was refused for another reason: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the mismatched set was not read within 5s")
	}
	if !strings.HasSuffix(keyID(), Fingerprint(&k[0].PublicKey)) {
		t.Fatalf("a mismatched set was used: %s", keyID())
	}

	// The rotated key with its own fingerprint: used.
	if err := vol.Update(secretFiles(k[1], Fingerprint(&k[1].PublicKey))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the rotated key in use", func() bool { return strings.HasSuffix(keyID(), Fingerprint(&k[1].PublicKey)) })
	c, _ := src.Credential(ctx)
	if !c.Key.Equal(k[1]) {
		t.Fatal("the keyId names the new key but another key signs")
	}
}

// With the fingerprint inline, a rotated key cannot bring its own: it is
// refused, and says why.
func TestKeyFilesInlineFingerprint(t *testing.T) {
	k := testKeys(t)
	vol, err := secretvolume.New(filepath.Join(t.TempDir(), "oci"), map[string][]byte{"key.pem": keyPEM(k[0])})
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewKeyFiles(KeyFilesOptions{Tenancy: "t", User: "u", KeyFile: vol.Path("key.pem"), Fingerprint: Fingerprint(&k[0].PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	if err := vol.Update(map[string][]byte{"key.pem": keyPEM(k[1])}); err != nil {
		t.Fatal(err)
	}
	changed, err := src.reload()
	if changed || err == nil || !strings.Contains(err.Error(), "auth.fingerprint") || !strings.Contains(err.Error(), Fingerprint(&k[1].PublicKey)) {
		t.Fatalf("reload: changed %v, err %v", changed, err)
	}
	if strings.Contains(err.Error(), "PRIVATE KEY") {
		t.Fatal("the error quotes the key")
	}
}
