// Package secretvolume writes a directory the way the kubelet writes a
// mounted Secret (or a projected volume): no kubelet runs in tests, so
// tests that rotate a mounted key or token do what it does.
//
// The kubelet's atomic writer (k8s.io/kubernetes/pkg/volume/util,
// atomic_writer.go) puts each version of the files into a fresh hidden
// directory (..<timestamp>), points the symlink ..data at it by creating
// ..data_tmp and renaming it over ..data (one atomic rename), makes each
// visible file a symlink through ..data, and removes the old version. A
// reader that opens a visible file sees either the whole old version or
// the whole new one; a watcher of the file's own inode sees nothing change.
package secretvolume

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"
)

var seq atomic.Int64

// Write makes files (name -> content) the current version in dir, creating
// dir if needed, and removes the previous version.
func Write(dir string, files map[string]string) error {
	b := make(map[string][]byte, len(files))
	for name, content := range files {
		b[name] = []byte(content)
	}
	return write(dir, b)
}

func write(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dataLink := filepath.Join(dir, "..data")
	old, _ := os.Readlink(dataLink)

	version := ".." + time.Now().UTC().Format("2006_01_02_15_04_05.") + strconv.FormatInt(seq.Add(1), 10)
	if err := os.Mkdir(filepath.Join(dir, version), 0o755); err != nil {
		return err
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, version, name), content, 0o600); err != nil {
			return err
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	_ = os.Remove(tmp)
	if err := os.Symlink(version, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dataLink); err != nil {
		return fmt.Errorf("swap ..data: %w", err)
	}
	for name := range files {
		link := filepath.Join(dir, name)
		if target, err := os.Readlink(link); err == nil && target == filepath.Join("..data", name) {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
			return err
		}
	}
	if old != "" {
		return os.RemoveAll(filepath.Join(dir, old))
	}
	return nil
}

// Volume is one such directory, for tests that hold on to it.
type Volume struct {
	Dir string
}

// New makes dir a secret volume holding files.
func New(dir string, files map[string][]byte) (*Volume, error) {
	if err := write(dir, files); err != nil {
		return nil, err
	}
	return &Volume{Dir: dir}, nil
}

// Path is the path of one file, as a container sees it.
func (v *Volume) Path(name string) string { return filepath.Join(v.Dir, name) }

// Update replaces every file at once.
func (v *Volume) Update(files map[string][]byte) error { return write(v.Dir, files) }
