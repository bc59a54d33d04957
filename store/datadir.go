package store

import (
	"errors"
	"github.com/scanwarden/scanwarden/installed"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/scanwarden/scanwarden/seal"
)

// The environment variables that name the data dir. EnvStateDir is the
// older name, still read.
const (
	EnvDataDir  = "SCANWARDEN_DATA_DIR"
	EnvStateDir = "SCANWARDEN_STATE_DIR"
)

// The installed box's data dir and sealing key (package installed).
const (
	InstalledDir     = installed.DataDir
	InstalledKeyFile = installed.KeyFile
)

// LocalDir is the data dir in the working directory: the one `serve`
// creates when nothing names another.
const LocalDir = "scanwarden-data"

// Fallback is DataDir's last resort, when nothing names a data dir and
// none is found.
type Fallback int

const (
	// UserStateDir is $XDG_STATE_HOME/scanwarden, else
	// ~/.local/state/scanwarden: every command but serve.
	UserStateDir Fallback = iota
	// Local is ./scanwarden-data, which the caller creates: serve.
	Local
)

// DataDir is the one rule by which every command picks scanwarden's data
// directory (database, sealing key, receiver, canary journal):
//
//  1. explicit — the --data-dir/--state-dir flag or the config's data_dir;
//  2. $SCANWARDEN_DATA_DIR, else $SCANWARDEN_STATE_DIR;
//  3. the installed box's /var/lib/scanwarden when this user may use it: it
//     holds a database this user may read and write (root, the service
//     user), or none yet and the dir is this user's (usableDataDir);
//  4. ./scanwarden-data when it exists in the working directory;
//  5. fallback: ./scanwarden-data (serve) or the user's state dir.
//
// The error says only that no home directory was found.
func DataDir(explicit string, getenv func(string) string, fallback Fallback) (string, error) {
	return dataDir(explicit, getenv, fallback, InstalledDir, LocalDir)
}

func dataDir(explicit string, getenv func(string) string, fallback Fallback, installed, local string) (string, error) {
	switch {
	case explicit != "":
		return explicit, nil
	case getenv(EnvDataDir) != "":
		return getenv(EnvDataDir), nil
	case getenv(EnvStateDir) != "":
		return getenv(EnvStateDir), nil
	case usableDataDir(installed):
		return installed, nil
	case isDir(local), fallback == Local:
		return local, nil
	case getenv("XDG_STATE_HOME") != "":
		return filepath.Join(getenv("XDG_STATE_HOME"), "scanwarden"), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", errors.New("no data dir: give --data-dir or set " + EnvDataDir)
		}
		home = h
	}
	return filepath.Join(home, ".local", "state", "scanwarden"), nil
}

// usableDataDir says whether dir is a data dir this user may use: it holds
// a database this user may read and write, or none yet and the dir is this
// user's (the service user before the daemon's first start). A database
// made by anyone else (root) would lock the daemon out of its own dir.
func usableDataDir(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || unix.Access(dir, unix.R_OK|unix.W_OK|unix.X_OK) != nil {
		return false
	}
	db := filepath.Join(dir, DefaultFile)
	if _, err := os.Lstat(db); err == nil {
		return unix.Access(db, unix.R_OK|unix.W_OK) == nil
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

func isDir(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

// KeyFile is the sealing key of dataDir: seal.Resolve (--key-file,
// $SCANWARDEN_KEY_FILE, $CREDENTIALS_DIRECTORY/secret.key, else secret.key
// in the data dir), except that the installed box's data dir, which keeps
// no key of its own, takes the installed key (/etc/scanwarden/secret.key):
// an admin's shell has no $CREDENTIALS_DIRECTORY.
func KeyFile(explicit string, getenv func(string) string, dataDir string) string {
	return keyFile(explicit, getenv, dataDir, InstalledDir, InstalledKeyFile)
}

func keyFile(explicit string, getenv func(string) string, dataDir, installedDir, installedKey string) string {
	p := seal.Resolve(explicit, getenv, dataDir)
	if p != filepath.Join(dataDir, seal.FileName) || filepath.Clean(dataDir) != installedDir {
		return p
	}
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if _, err := os.Stat(installedKey); err == nil {
		return installedKey
	}
	return p
}
