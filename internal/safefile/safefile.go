// Package safefile is how a root command touches a folder a less trusted
// user owns (the daemon's data dir): every path is resolved below a folder
// held open as a descriptor (Dir), no component followed as a symbolic
// link, every file opened without waiting (a FIFO would block the open for
// ever), judged on its descriptor, and read no further than a bound.
package safefile

import "path/filepath"

// Read reads the regular file at path, at most max bytes (more is an
// error): its folder opened without following a link at its last
// component, the file below it as Dir.ReadFile reads it.
func Read(path string, max int64) ([]byte, error) {
	d, err := OpenDir(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadFile(filepath.Base(path), max)
}
