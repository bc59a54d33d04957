package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/scanwarden/scanwarden"
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

// readSecretFile reads a one-line secret from file ("-": stdin). Errors name
// the flag and the file, never the content.
func readSecretFile(stdin io.Reader, file, flagName string) (scanwarden.Secret, error) {
	var b []byte
	var err error
	if file == "-" {
		b, err = io.ReadAll(io.LimitReader(stdin, 64<<10))
	} else {
		b, err = os.ReadFile(file)
	}
	if err != nil {
		return scanwarden.Secret{}, fmt.Errorf("%s: %w", flagName, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return scanwarden.Secret{}, fmt.Errorf("%s %s: the first line is empty", flagName, file)
	}
	return scanwarden.NewSecret(line), nil
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
