package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/explain"
)

func newExplainCmd(streams genericiooptions.IOStreams) *cobra.Command {
	var markdown bool
	cmd := &cobra.Command{
		Use:   "explain [FINDING-ID]",
		Short: "Explain a finding: why, the controller code per version, what to do",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if markdown {
				return explain.Markdown(streams.Out)
			}
			if len(args) == 0 {
				return explain.List(streams.Out)
			}
			r, ok := diagnose.RuleByID(args[0])
			if !ok {
				return &ExitCodeError{Code: ExitUsage, Err: fmt.Errorf("no finding %q: run `kubectl rolloutdoctor explain` for the list", args[0])}
			}
			return explain.Rule(streams.Out, r)
		},
	}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print every rule as the docs/rules.md page")
	return cmd
}
