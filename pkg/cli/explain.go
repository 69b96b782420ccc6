package cli

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/explain"
)

// ExplainOptions holds the explain command's inputs.
type ExplainOptions struct {
	// ID is the finding to explain; "" lists them all.
	ID       string
	Markdown bool

	rule    *diagnose.Rule
	streams genericiooptions.IOStreams
}

// NewExplainOptions makes the explain command's options.
func NewExplainOptions(streams genericiooptions.IOStreams) *ExplainOptions {
	return &ExplainOptions{streams: streams}
}

func newExplainCommand(o *ExplainOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "explain [FINDING-ID]",
		Short: "Explain a finding: why, the controller code per version, what to do",
		Args:  usageArgs(cobra.MaximumNArgs(1)),
		RunE:  runE(o),
	}
	cmd.Flags().BoolVar(&o.Markdown, "markdown", false, "print every rule as the docs/rules.md page")
	return cmd
}

// Complete takes the finding ID.
func (o *ExplainOptions) Complete(args []string) error {
	if len(args) == 1 {
		o.ID = args[0]
	}
	return nil
}

// Validate looks the finding up (--markdown prints them all, so it needs none).
func (o *ExplainOptions) Validate() error {
	if o.Markdown || o.ID == "" {
		return nil
	}
	r, ok := diagnose.RuleByID(o.ID)
	if !ok {
		return usageErrorf("no finding %q: run `kubectl rolloutdoctor explain` for the list", o.ID)
	}
	o.rule = r
	return nil
}

// Run prints the rules page, the list, or one rule's long form.
func (o *ExplainOptions) Run(context.Context) error {
	switch {
	case o.Markdown:
		return explain.Markdown(o.streams.Out)
	case o.ID == "":
		return explain.List(o.streams.Out)
	}
	return explain.Rule(o.streams.Out, o.rule)
}
