//go:build !packager

// Without -tags packager the command only says how to build it, so that
// `go build ./...` and `go test ./...` (which leave nfpm and its
// dependencies out) still see a package here.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "packager: build it with -tags packager, as scripts/package does: go run -tags packager ./internal/packager -version V -binary B")
	os.Exit(2)
}
