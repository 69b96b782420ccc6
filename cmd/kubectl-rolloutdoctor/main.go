// Command kubectl-rolloutdoctor is a kubectl plugin for incident response on
// Argo Rollouts.
package main

import (
	"fmt"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // exec, OIDC and cloud auth providers

	"github.com/rolloutdoctor/rolloutdoctor/pkg/cli"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	err := cli.NewRoot(streams).Execute()
	if err != nil && err.Error() != "" {
		fmt.Fprintln(os.Stderr, "error:", err)
	}
	os.Exit(cli.Code(err))
}
