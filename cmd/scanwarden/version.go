package main

import "fmt"

// version is set at link time: go build -ldflags "-X main.version=1.2.3"
// (scripts/package does).
var version = "dev"

const versionUsage = "usage: scanwarden version\n"

func runVersion(env environ, args []string) int {
	c := newCommand(env, "version", versionUsage, 0)
	if _, code, ok := c.parse(args, 0, "takes no arguments"); !ok {
		return code
	}
	fmt.Fprintln(env.stdout, "scanwarden", version)
	return exitOK
}
