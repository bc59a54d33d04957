package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

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
