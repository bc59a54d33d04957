package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/installed"
	"github.com/scanwarden/scanwarden/seal"
	"github.com/scanwarden/scanwarden/store"
)

// parseInterspersed parses flags that may come before or after the
// positional arguments ("--" ends the flags).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
		if len(pos) > 8 {
			return nil, errors.New("too many arguments")
		}
	}
}

// readSecretFile reads a one-line secret from file ("-": stdin) by
// scanwarden.ReadSecret. Errors name the flag and the file, never the
// content.
func readSecretFile(stdin io.Reader, file, flagName string) (scanwarden.Secret, error) {
	var s scanwarden.Secret
	var err error
	if file == "-" {
		s, err = scanwarden.ReadSecret(stdin)
	} else {
		s, err = scanwarden.ReadSecretFile(file)
	}
	var pe *os.PathError
	switch {
	case errors.As(err, &pe):
		return s, fmt.Errorf("%s: %w", flagName, err)
	case err != nil:
		return s, fmt.Errorf("%s %s: %w", flagName, file, err)
	}
	return s, nil
}

// readSecret takes a secret from --FLAG FILE, else from the environment
// variable envName.
func readSecret(env environ, file, flagName, envName string) (scanwarden.Secret, error) {
	if file != "" {
		return readSecretFile(env.stdin, file, flagName)
	}
	if v := env.getenv(envName); v != "" {
		return scanwarden.NewSecret(v), nil
	}
	return scanwarden.Secret{}, fmt.Errorf("give %s FILE or set %s", flagName, envName)
}

// dataFlags are --data-dir (and its older name --state-dir) and --key-file:
// where the data dir and the sealing key are. Every command registers them
// here and opens the store with open. A registry command also takes
// --config: the config of the serve whose data it reads.
type dataFlags struct {
	dataDir, keyFile string
	configFile       string         // --config
	config           *config.Config // --config's, read by readConfig
}

// dataFlag names one of the data flags a command takes.
type dataFlag int

const (
	withDataDir  dataFlag = iota // --data-dir
	withStateDir                 // --state-dir, the older name of --data-dir
	withKeyFile                  // --key-file
	withConfig                   // --config, for a registry command
)

// dataDirUsage is --data-dir's help: store.DataDir's rule.
const dataDirUsage = "scanwarden's data directory (default $" + store.EnvDataDir + ", else " + store.InstalledDir +
	" when this user may use it, else ./" + store.LocalDir + " when it exists, else the user's state dir)"

// keyFileUsage is --key-file's help: store.KeyFile's rule.
const keyFileUsage = "key that seals the stored secrets (default $" + seal.EnvKeyFile + ", else $CREDENTIALS_DIRECTORY/" +
	seal.FileName + ", else " + seal.FileName + " in the data dir, " + store.InstalledKeyFile + " for " + store.InstalledDir +
	"; made on first use)"

// register adds the data flags named to fs.
func (f *dataFlags) register(fs *flag.FlagSet, names ...dataFlag) {
	for _, n := range names {
		switch n {
		case withDataDir:
			fs.StringVar(&f.dataDir, "data-dir", "", dataDirUsage)
		case withStateDir:
			fs.StringVar(&f.dataDir, "state-dir", "", "the same as --data-dir")
		case withKeyFile:
			fs.StringVar(&f.keyFile, "key-file", "", keyFileUsage)
		case withConfig:
			fs.StringVar(&f.configFile, "config", "", registryConfigUsage)
		}
	}
}

// registryConfigUsage is --config's help for a registry command.
const registryConfigUsage = "the daemon's config: its data_dir (unless --data-dir is given) and the settings named above (default " +
	installed.ConfigFile + " when this user can read it; else the defaults)"

// readConfig reads --config when given (an error when it cannot be read
// or is not valid); its data_dir is the data dir unless --data-dir is
// given. Only the file is parsed: the secret files it names are not read.
func (f *dataFlags) readConfig() error {
	if f.configFile == "" {
		return nil
	}
	cfg, err := parseConfigFile(f.configFile)
	if err != nil {
		return err
	}
	if f.dataDir == "" {
		f.dataDir = cfg.DataDir
	}
	f.config = &cfg
	return nil
}

// daemonConfig is the daemon's config as a registry command reads it:
// --config's (readConfig), else the installed config when this user can
// read it and it is valid, else the defaults.
func (f *dataFlags) daemonConfig() config.Config {
	if f.config != nil {
		return *f.config
	}
	if cfg, err := parseConfigFile(installed.ConfigFile); err == nil {
		return cfg
	}
	return config.Defaults()
}

// parseConfigFile reads and validates the daemon's config file without
// reading the secret files it names.
func parseConfigFile(file string) (config.Config, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return config.Config{}, fmt.Errorf("config: %w", err)
	}
	return config.Parse(file, b)
}

// dir is the data dir by store.DataDir's rule, absolute (smbd and the
// canary journal are given paths inside it).
func (f *dataFlags) dir(env environ) (string, error) {
	d, err := store.DataDir(f.dataDir, env.getenv, store.UserStateDir)
	if err != nil {
		return "", err
	}
	return filepath.Abs(d)
}

// open opens the data dir's store; with unlock, its sealing key too (made
// on first use), so that it reads and writes the sealed secrets. It is the
// one way a command opens the store.
func (f *dataFlags) open(ctx context.Context, env environ, unlock bool) (*store.Store, error) {
	dir, err := f.dir(env)
	if err != nil {
		return nil, err
	}
	if unlock {
		return store.OpenUnlocked(ctx, dir, f.keyFile, env.getenv)
	}
	return store.OpenDir(ctx, dir)
}

// openRead opens the data dir's store read-only (its key loaded, never
// made, with unlock): for a command that only reads. It creates and
// changes no file in the data dir, which may be the daemon's.
func (f *dataFlags) openRead(ctx context.Context, env environ, unlock bool) (*store.Store, error) {
	dir, err := f.dir(env)
	if err != nil {
		return nil, err
	}
	if unlock {
		return store.OpenReadOnlyUnlocked(ctx, dir, f.keyFile, env.getenv)
	}
	return store.OpenReadOnlyDir(ctx, dir)
}
