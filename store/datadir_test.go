package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/scanwarden/scanwarden/systemd"
	"github.com/scanwarden/scanwarden/testlab"
)

// TestInstalledPaths: the rule looks where the package installs.
func TestInstalledPaths(t *testing.T) {
	if InstalledDir != systemd.StateDir || InstalledKeyFile != systemd.KeyFile {
		t.Errorf("store has %s and %s, the package %s and %s", InstalledDir, InstalledKeyFile, systemd.StateDir, systemd.KeyFile)
	}
}

// TestDataDir: the one rule, in order — explicit, SCANWARDEN_DATA_DIR,
// SCANWARDEN_STATE_DIR, the installed dir when it holds a usable database,
// ./scanwarden-data when it exists, then serve's ./scanwarden-data or the
// user's state dir.
func TestDataDir(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	ownState := filepath.Join(home, ".local", "state", "scanwarden")
	// Installed dirs: with the daemon's database, ours without one, another
	// user's without one, missing.
	withDB, empty, foreign, missing := filepath.Join(root, "withdb"), filepath.Join(root, "empty"),
		filepath.Join(root, "foreign"), filepath.Join(root, "missing")
	for _, d := range []string{withDB, empty, foreign} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(foreign, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(withDB, DefaultFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// ./scanwarden-data: present or not.
	local, noLocal := filepath.Join(root, "local"), filepath.Join(root, "nolocal")
	if err := os.Mkdir(local, 0o700); err != nil {
		t.Fatal(err)
	}
	localFile := filepath.Join(root, "localfile") // a file of that name is no data dir
	if err := os.WriteFile(localFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name      string
		explicit  string
		env       map[string]string
		installed string
		local     string
		fallback  Fallback
		want      string
	}{
		{"flag wins over everything", "/flag", map[string]string{EnvDataDir: "/env", EnvStateDir: "/st"}, withDB, local, Local, "/flag"},
		{"SCANWARDEN_DATA_DIR", "", map[string]string{EnvDataDir: "/env", EnvStateDir: "/st"}, withDB, local, UserStateDir, "/env"},
		{"SCANWARDEN_STATE_DIR is its alias", "", map[string]string{EnvStateDir: "/st"}, withDB, local, UserStateDir, "/st"},
		{"installed box with its database", "", nil, withDB, local, UserStateDir, withDB},
		{"installed box, serve", "", nil, withDB, noLocal, Local, withDB},
		{"installed dir of ours without a database yet", "", nil, empty, local, UserStateDir, empty},
		{"another user's installed dir without a database", "", nil, foreign, local, UserStateDir, local},
		{"./scanwarden-data exists", "", nil, missing, local, UserStateDir, local},
		{"./scanwarden-data exists, serve", "", nil, missing, local, Local, local},
		{"serve creates ./scanwarden-data", "", nil, missing, noLocal, Local, noLocal},
		{"nothing: the user's state dir", "", nil, missing, noLocal, UserStateDir, ownState},
		{"a file named scanwarden-data is not one", "", nil, missing, localFile, UserStateDir, ownState},
		{"XDG_STATE_HOME", "", map[string]string{"XDG_STATE_HOME": "/xdg"}, missing, noLocal, UserStateDir, "/xdg/scanwarden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.installed == foreign && os.Geteuid() != 0 {
				testlab.Missing(t, "making a dir of another user needs root")
			}
			env := map[string]string{"HOME": home}
			for k, v := range tc.env {
				env[k] = v
			}
			got, err := dataDir(tc.explicit, func(k string) string { return env[k] }, tc.fallback, tc.installed, tc.local)
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestDataDirUnusableInstalled: an installed dir whose database this user
// may not write is not taken (run as an unprivileged user only).
func TestDataDirUnusableInstalled(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write any file")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, DefaultFile), nil, 0o400); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string { return map[string]string{"HOME": "/h"}[k] }
	if got, _ := dataDir("", env, UserStateDir, dir, "/none"); got != "/h/.local/state/scanwarden" {
		t.Errorf("read-only installed database taken: %s", got)
	}
}

// TestKeyFile: the installed data dir, which keeps no key of its own, is
// unlocked with the installed key; any other dir, or a key named by flag or
// environment, is left to seal.Resolve.
func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	inst, key := filepath.Join(dir, "var"), filepath.Join(dir, "etc.key")
	none := func(string) string { return "" }
	if got := keyFile("", none, inst, inst, key); got != filepath.Join(inst, "secret.key") {
		t.Errorf("no installed key: %s", got)
	}
	if err := os.WriteFile(key, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := keyFile("", none, inst, inst, key); got != key {
		t.Errorf("installed box: %s", got)
	}
	if got := keyFile("", none, filepath.Join(dir, "other"), inst, key); got != filepath.Join(dir, "other", "secret.key") {
		t.Errorf("another data dir: %s", got)
	}
	if got := keyFile("/f.key", none, inst, inst, key); got != "/f.key" {
		t.Errorf("flag: %s", got)
	}
	if err := os.Mkdir(inst, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inst, "secret.key"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := keyFile("", none, inst, inst, key); got != filepath.Join(inst, "secret.key") {
		t.Errorf("installed dir with its own key: %s", got)
	}
}
