package main

import "fmt"

// version is set at link time: go build -ldflags "-X main.version=1.2.3"
// (scripts/package does).
var version = "dev"

func runVersion(env environ, args []string) int {
	if len(args) > 0 {
		fmt.Fprintln(env.stderr, "usage: scanwarden version")
		return exitUsage
	}
	fmt.Fprintln(env.stdout, "scanwarden", version)
	return exitOK
}
