package ociauth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/md5" //nolint:gosec // OCI API key fingerprints are MD5 of the public key
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
)

// KeyFilesOptions name an API key's files: a mounted Secret, whose files
// the kubelet swaps all at once when the Secret changes.
type KeyFilesOptions struct {
	Tenancy, User string
	// KeyFile holds the PEM private key. Required.
	KeyFile string
	// FingerprintFile holds the key's fingerprint; when empty, Fingerprint
	// is the fingerprint (from the config, so a new key must keep it).
	FingerprintFile, Fingerprint string
	// PassphraseFile holds the key's passphrase; when empty, Passphrase
	// (may be "": no passphrase).
	PassphraseFile, Passphrase string
	// Metrics records every reload (nil: none).
	Metrics *ccmmetrics.Credentials
	// Settle is how long a change must stay quiet before the files are
	// read (default 200ms): the kubelet's swap is a burst of events.
	Settle time.Duration
	// Poll re-reads the files this often in case a change notification
	// is lost (default 1m).
	Poll time.Duration
}

// maxFileSize bounds what is read from one file: a PEM key is a few KiB.
const maxFileSize = 64 << 10

// KeyFiles is an API key read from files and read again whenever they
// change, without a restart. The new key replaces the old one only when
// the whole set (key, passphrase, fingerprint) parses and the fingerprint
// is the key's own; until then every request is signed with the old one,
// so a half-written or mistaken Secret breaks nothing.
//
// It watches the files' directories, not the files: the kubelet updates a
// mounted Secret by writing a new directory and swapping the "..data"
// symlink, so the files' own inodes never change.
type KeyFiles struct {
	o KeyFilesOptions

	mu   sync.Mutex // serializes reloads
	last []byte     // the bytes of the set in use, to skip reloads of no change
	cur  Credential
	curM sync.RWMutex

	reloaded func(changed bool, err error) // tests: called after each reload of Run
}

// NewKeyFiles reads the key once; an error names the file and what is
// wrong with it, never its content.
func NewKeyFiles(o KeyFilesOptions) (*KeyFiles, error) {
	if o.Settle <= 0 {
		o.Settle = 200 * time.Millisecond
	}
	if o.Poll <= 0 {
		o.Poll = time.Minute
	}
	k := &KeyFiles{o: o}
	if _, err := k.reload(); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *KeyFiles) Credential(context.Context) (Credential, error) {
	k.curM.RLock()
	defer k.curM.RUnlock()
	return k.cur, nil
}

func (k *KeyFiles) Kind() string { return ccmmetrics.SourceKeyFiles }

func (k *KeyFiles) Describe() string {
	c, _ := k.Credential(context.Background())
	return fmt.Sprintf("API key %s from %s (re-read when it changes)", c.KeyID, k.o.KeyFile)
}

// reload reads the files and swaps the key in if they changed and hold a
// usable set. It reports whether the key changed.
func (k *KeyFiles) reload() (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	keyPEM, err := readSmall(k.o.KeyFile)
	if err != nil {
		return false, fmt.Errorf("auth.key_file %s: %w", k.o.KeyFile, err)
	}
	fp, pass := k.o.Fingerprint, k.o.Passphrase
	if k.o.FingerprintFile != "" {
		b, err := readSmall(k.o.FingerprintFile)
		if err != nil {
			return false, fmt.Errorf("auth.fingerprint_file %s: %w", k.o.FingerprintFile, err)
		}
		fp = strings.TrimSpace(string(b))
	}
	if k.o.PassphraseFile != "" {
		b, err := readSmall(k.o.PassphraseFile)
		if err != nil {
			return false, fmt.Errorf("auth.passphrase_file %s: %w", k.o.PassphraseFile, err)
		}
		pass = strings.TrimRight(string(b), "\r\n")
	}
	set := bytes.Join([][]byte{keyPEM, []byte(fp), []byte(pass)}, []byte{0})
	if k.last != nil && bytes.Equal(set, k.last) {
		return false, nil
	}
	key, err := parseKey(keyPEM, pass)
	if err != nil {
		return false, fmt.Errorf("auth.key_file %s: %w", k.o.KeyFile, err)
	}
	if own := Fingerprint(&key.PublicKey); fp != own {
		from := "auth.fingerprint"
		if k.o.FingerprintFile != "" {
			from = "auth.fingerprint_file " + k.o.FingerprintFile
		}
		return false, fmt.Errorf("%s %q is not the fingerprint of the key in auth.key_file %s (%s)", from, fp, k.o.KeyFile, own)
	}
	k.curM.Lock()
	k.cur = Credential{KeyID: k.o.Tenancy + "/" + k.o.User + "/" + fp, Key: key}
	k.curM.Unlock()
	k.last = set
	if k.o.Metrics != nil {
		k.o.Metrics.Refreshed(time.Time{})
	}
	return true, nil
}

// Run watches the files' directories until ctx ends, reloading after each
// burst of changes settles, and every Poll in case a notification is lost.
func (k *KeyFiles) Run(ctx context.Context) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		klog.ErrorS(err, "Cannot watch the OCI API key's files; re-reading them every poll period only", "period", k.o.Poll)
	} else {
		defer func() { _ = w.Close() }()
		for _, dir := range k.dirs() {
			if err := w.Add(dir); err != nil {
				klog.ErrorS(err, "Cannot watch a directory of the OCI API key's files; re-reading them every poll period", "dir", dir, "period", k.o.Poll)
			}
		}
	}
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		events, errs = w.Events, w.Errors
	}
	poll := time.NewTicker(k.o.Poll)
	defer poll.Stop()
	// A change between the first read and the watch is caught here.
	settle := time.NewTimer(0)
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			settle.Reset(k.o.Settle)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			klog.ErrorS(err, "Watching the OCI API key's files")
		case <-settle.C:
			k.reloadAndReport()
		case <-poll.C:
			k.reloadAndReport()
		}
	}
}

func (k *KeyFiles) reloadAndReport() {
	changed, err := k.reload()
	if k.reloaded != nil {
		defer k.reloaded(changed, err)
	}
	switch {
	case err != nil:
		if k.o.Metrics != nil {
			k.o.Metrics.RefreshFailed()
		}
		c, _ := k.Credential(context.Background())
		klog.ErrorS(err, "The OCI API key's files changed but cannot be used; still signing with the key in use", "keyId", c.KeyID)
	case changed:
		c, _ := k.Credential(context.Background())
		klog.InfoS("Reloaded the OCI API key from its files; new requests are signed with it", "keyId", c.KeyID, "file", k.o.KeyFile)
	}
}

// dirs are the directories of the key's files, each once.
func (k *KeyFiles) dirs() []string {
	var out []string
	for _, f := range []string{k.o.KeyFile, k.o.FingerprintFile, k.o.PassphraseFile} {
		if f == "" {
			continue
		}
		d := filepath.Dir(f)
		if !contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// readSmall reads a regular file (through symlinks) of at most maxFileSize.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	if st.Size() > maxFileSize {
		return nil, fmt.Errorf("%d bytes, more than a key file's %d", st.Size(), maxFileSize)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize))
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("file is empty")
	}
	return b, nil
}

// Fingerprint is an API key's fingerprint: the MD5 of the public key in
// DER (PKIX), as colon-separated lower-case hex. It is public.
func Fingerprint(pub crypto.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "(unknown)"
	}
	sum := md5.Sum(der) //nolint:gosec // the fingerprint format is MD5
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02x", b)
	}
	return strings.Join(parts, ":")
}
