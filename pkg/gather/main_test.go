package gather

import (
	"os"
	"testing"
)

// The test binary is the relay of the plugins it has relayed, as the
// command's binary is in a scan.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == RelayArg {
		os.Exit(RunRelay(os.Args[2:]))
	}
	os.Exit(m.Run())
}
