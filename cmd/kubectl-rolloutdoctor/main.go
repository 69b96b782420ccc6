// Command kubectl-rolloutdoctor is a kubectl plugin for incident response on
// Argo Rollouts.
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // exec, OIDC and cloud auth providers

	"github.com/rolloutdoctor/rolloutdoctor/pkg/cli"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
)

func main() {
	// A scan of several clusters runs their credential plugins through
	// this binary, to tell what each prints (gather.PluginOutput).
	if len(os.Args) > 1 && os.Args[1] == gather.RelayArg {
		os.Exit(gather.RunRelay(os.Args[2:]))
	}
	// A one-shot read of thousands of pods makes most of its garbage while
	// decoding them; collecting at half the default heap growth keeps the
	// peak near what the data needs for a few percent more CPU. GOGC, when
	// set, still decides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	err := cli.NewRoot(streams).Execute()
	if err != nil && err.Error() != "" {
		fmt.Fprintln(os.Stderr, "error:", err)
	}
	gather.StopAbandonedPlugins()
	os.Exit(cli.Code(err))
}
