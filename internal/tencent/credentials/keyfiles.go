package credentials

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"

	"github.com/ccmkit/ccm/internal/ccmmetrics"
	"github.com/ccmkit/ccm/internal/cloudconfig"
)

// KeyFiles is a key pair of which at least one half is read from a file,
// typically a mounted Kubernetes Secret. The kubelet updates a mounted
// Secret atomically: it writes the new files into a fresh directory and
// swaps the `..data` symlink the visible files point through. So the
// directory is watched, not the file (whose own inode never changes), and
// both halves are read again on any change there and swapped in together,
// only when both read whole.
type KeyFiles struct {
	SecretID, SecretKey KeyPart
	// Poll is how often the files are read even without a change signal,
	// in case the file system sends none (default 1m).
	Poll time.Duration
	// Settle is how long after a change signal the files are read, so that
	// the kubelet's several renames land first (default 100ms).
	Settle time.Duration
}

// KeyPart is one half of the key: a value, or the file it is read from.
type KeyPart struct {
	Value, File string
}

// maxKeyFileSize matches the config's limit for a secret file.
const maxKeyFileSize = 4096

// Name implements Source.
func (k KeyFiles) Name() string { return ccmmetrics.SourceKeyFiles }

// Describe implements Source.
func (k KeyFiles) Describe() string {
	var files []string
	for _, p := range []KeyPart{k.SecretID, k.SecretKey} {
		if p.File != "" {
			files = append(files, p.File)
		}
	}
	return "a key read from " + strings.Join(files, " and ") + " (re-read when it changes)"
}

// maxVersionReads bounds how often Fetch reads the pair when the version
// it read is replaced meanwhile; a Secret swapped more often than that is
// refused this time and read again at the next signal.
const maxVersionReads = 5

// Fetch implements Source: both halves, each read whole and checked, and
// from one version of the Secret. Two files cannot be read in one step: a
// swap between reading the id and the key would pair the old id with the
// new key, and every call signed with that pair would fail. In the
// kubelet's layout (both files link through the directory's `..data`
// symlink), both are read from the version directory `..data` names, which
// the kubelet never changes, only replaces; a read that fails because that
// version was removed meanwhile is made again. Files in another layout are
// read as they are; the watch reads them Settle after the last change.
func (k KeyFiles) Fetch(context.Context) (Value, error) {
	for range maxVersionReads - 1 {
		version := k.dataVersion()
		v, err := k.readPair(version)
		if err != nil && version != "" && k.dataVersion() != version {
			continue // swapped while read: read the new version
		}
		return v, err
	}
	return k.readPair(k.dataVersion())
}

// readPair reads both halves, from the version directory version of the
// files' directory when it is not empty.
func (k KeyFiles) readPair(version string) (Value, error) {
	id, err := k.SecretID.read("secret_id_file", version)
	if err != nil {
		return Value{}, err
	}
	key, err := k.SecretKey.read("secret_key_file", version)
	if err != nil {
		return Value{}, err
	}
	return Value{SecretID: id, SecretKey: key}, nil
}

// dataVersion is where the `..data` symlink of the files' directory points
// when every file is a symlink to `..data/<its name>` there (a Secret the
// kubelet mounted), else "".
func (k KeyFiles) dataVersion() string {
	dir := ""
	for _, p := range []KeyPart{k.SecretID, k.SecretKey} {
		if p.File == "" {
			continue
		}
		if dir != "" && filepath.Dir(p.File) != dir {
			return ""
		}
		dir = filepath.Dir(p.File)
		if target, err := os.Readlink(p.File); err != nil || target != filepath.Join("..data", filepath.Base(p.File)) {
			return ""
		}
	}
	if dir == "" {
		return ""
	}
	version, err := os.Readlink(filepath.Join(dir, "..data"))
	if err != nil || strings.Contains(version, "/") {
		return "" // the kubelet links to a sibling directory; anything else is not its layout
	}
	return version
}

// read returns the part's value, read from its file (within the version
// directory version of the file's directory, when not empty).
func (p KeyPart) read(setting, version string) (string, error) {
	if p.File == "" {
		return p.Value, nil
	}
	path := p.File
	if version != "" {
		path = filepath.Join(filepath.Dir(p.File), version, filepath.Base(p.File))
	}
	data, err := cloudconfig.ReadSmallFile(path, maxKeyFileSize, "a credential")
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", setting, p.File, err)
	}
	v := strings.TrimSpace(data)
	if v == "" {
		return "", fmt.Errorf("%s %s: file is empty", setting, p.File)
	}
	for _, c := range v {
		if c <= ' ' || c > '~' || c == '"' || c == '\'' {
			return "", fmt.Errorf("%s %s: must be printable ASCII without spaces or quotes (the value is not shown)", setting, p.File)
		}
	}
	return v, nil
}

// Changes implements watcher: a signal after any change in the files'
// directories, and every Poll.
func (k KeyFiles) Changes(ctx context.Context) <-chan struct{} {
	poll, settle := k.Poll, k.Settle
	if poll <= 0 {
		poll = time.Minute
	}
	if settle <= 0 {
		settle = 100 * time.Millisecond
	}
	out := make(chan struct{}, 1)
	signal := func() {
		select {
		case out <- struct{}{}:
		default: // one pending signal is enough
		}
	}
	events, errs := k.watchDirs(ctx)
	// The files may have changed between the first read and the watch's
	// start: read them once more now that the watch is on.
	signal()
	go func() {
		ticker := time.NewTicker(poll)
		defer ticker.Stop()
		var settled <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				signal()
			case _, ok := <-events:
				if !ok {
					events = nil
					continue
				}
				settled = time.After(settle)
			case err, ok := <-errs:
				if !ok {
					errs = nil
					continue
				}
				klog.ErrorS(err, "Watching the Tencent Cloud key files; they are still read every poll period", "poll", poll)
			case <-settled:
				settled = nil
				signal()
			}
		}
	}()
	return out
}

// watchDirs watches the directories of the key files (nil channels when
// watching is not possible: then only polling reads them).
func (k KeyFiles) watchDirs(ctx context.Context) (<-chan fsnotify.Event, <-chan error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		klog.ErrorS(err, "Cannot watch the Tencent Cloud key files; they are read every poll period instead")
		return nil, nil
	}
	seen := map[string]bool{}
	for _, p := range []KeyPart{k.SecretID, k.SecretKey} {
		if p.File == "" {
			continue
		}
		dir := filepath.Dir(p.File)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		if err := w.Add(dir); err != nil {
			klog.ErrorS(err, "Cannot watch a Tencent Cloud key file's directory; it is read every poll period instead", "dir", dir)
		}
	}
	go func() {
		<-ctx.Done()
		_ = w.Close()
	}()
	return w.Events, w.Errors
}
