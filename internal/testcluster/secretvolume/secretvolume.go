// Package secretvolume lays out and updates a directory the way the
// kubelet does a mounted Secret, for tests of code that must follow it.
package secretvolume

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Volume is a directory laid out the way the kubelet lays out a
// mounted Secret, and updated the way it updates one (its AtomicWriter):
// the files live in a timestamped directory, "..data" is a symlink to it,
// and each file name is a symlink through "..data". An update writes a new
// timestamped directory, points "..data_tmp" at it, renames "..data_tmp"
// over "..data" (the atomic step) and removes the old directory. A reader
// of a file path sees the old set or the new one, never a mix within one
// open; a watcher of the file's own inode sees nothing change.
type Volume struct {
	Dir string
	old string // the timestamped directory in use
	seq int
}

// New makes dir (which must not exist yet, or be empty) a
// secret volume holding files.
func New(dir string, files map[string][]byte) (*Volume, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	v := &Volume{Dir: dir}
	if err := v.Update(files); err != nil {
		return nil, err
	}
	for name := range files {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Path is the path of one file, as a container sees it.
func (v *Volume) Path(name string) string { return filepath.Join(v.Dir, name) }

// Update replaces every file at once. The file names must stay the same
// set (the kubelet would also add and remove the top-level symlinks).
func (v *Volume) Update(files map[string][]byte) error {
	v.seq++
	ts := fmt.Sprintf("..%s.%d", time.Now().UTC().Format("2006_01_02_15_04_05.000000000"), v.seq)
	tsDir := filepath.Join(v.Dir, ts)
	if err := os.Mkdir(tsDir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(tsDir, name), data, 0o600); err != nil {
			return err
		}
	}
	tmp := filepath.Join(v.Dir, "..data_tmp")
	_ = os.Remove(tmp)
	if err := os.Symlink(ts, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(v.Dir, "..data")); err != nil {
		return err
	}
	if v.old != "" {
		if err := os.RemoveAll(filepath.Join(v.Dir, v.old)); err != nil {
			return err
		}
	}
	v.old = ts
	return nil
}
