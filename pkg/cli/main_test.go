package cli

import (
	"os"
	"testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
)

// The test binary relays the credential plugins of the scans it runs, as
// the command's binary does (see main).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == gather.RelayArg {
		os.Exit(gather.RunRelay(os.Args[2:]))
	}
	os.Exit(m.Run())
}
