package main

import (
	"os"
	"testing"
)

// mainEnv set to 1 makes the test binary run scanwarden's main with the
// arguments after "--": tests start the real program (signals, exit codes)
// without building it.
const mainEnv = "SCANWARDEN_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		for i, a := range os.Args {
			if a == "--" {
				os.Args = append([]string{"scanwarden"}, os.Args[i+1:]...)
				break
			}
		}
		main()
		return
	}
	os.Exit(m.Run())
}
