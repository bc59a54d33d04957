package main

import (
	"context"
	"fmt"

	"github.com/scanwarden/scanwarden"
)

const versionUsage = "usage: scanwarden version\n"

// runVersion prints the version (the VERSION file's, or the package's set
// at link time), the commit and the Go it was built with, and a warning
// when that Go has advisories the code reaches.
func runVersion(_ context.Context, env environ, name string, args []string) int {
	c := newCommand(env, name, versionUsage)
	if _, code, ok := c.parse(args, 0, "takes no arguments"); !ok {
		return code
	}
	b := scanwarden.BuildInfo()
	fmt.Fprintln(env.stdout, b)
	if b.Warning != "" {
		fmt.Fprintln(env.stderr, "warning:", b.Warning)
	}
	return exitOK
}
