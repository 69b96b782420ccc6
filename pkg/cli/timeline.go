package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/gather"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/render"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/timeline"
)

// TimelineOptions holds the timeline command's inputs.
type TimelineOptions struct {
	CommonOptions
	Name string
	// HTML is where to write the report as one HTML file ("" none).
	HTML string
	// All lists every entry in the human view.
	All bool
}

// NewTimelineOptions makes the timeline command's options.
func NewTimelineOptions(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *TimelineOptions {
	return &TimelineOptions{CommonOptions: newCommon(flags, streams, "json", "yaml")}
}

func newTimelineCommand(o *TimelineOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "timeline [rollout/]NAME | -f FILE",
		Short: "What happened to a Rollout, when, and who did it: weight against available pods over time, findings, actions",
		Long: `timeline rebuilds a Rollout's history. From a record (kubectl rolloutdoctor record) it has every
change: the canary weight against each ReplicaSet's available pods at every write, the findings
active at each moment, and who made each change (managedFields). From the cluster it has what the
cluster still holds: ReplicaSet creations and revisions, the last transition of each condition,
pause and abort times, AnalysisRun measurements, the Events still kept, and each field manager's
last write — and it says how far back each of those is complete.

The terminal view is a swimlane over time; --html writes the same as one self-contained HTML file
with an SVG chart (no network, no scripts); -o json is the whole timeline for other tools.`,
		Example: `  kubectl rolloutdoctor timeline checkout-api -n shop
  kubectl rolloutdoctor timeline -f incident.rec
  kubectl rolloutdoctor timeline -f incident.rec --html report.html
  kubectl rolloutdoctor timeline -f incident.rec -o json`,
		Args:              usageArgs(cobra.MaximumNArgs(1)),
		ValidArgsFunction: o.completeRollouts,
		RunE:              runE(o),
	}
	o.addFilenameFlag(cmd, "the record (or snapshot) in `FILE` instead of the cluster (- for stdin)")
	o.addOutputFlags(cmd, "output format: json or yaml (default: human)")
	o.addControllerFlags(cmd, usageControllerVersion, true)
	cmd.Flags().StringVar(&o.HTML, "html", o.HTML, "also write the timeline as one self-contained HTML `FILE` (an SVG chart; opens offline)")
	cmd.Flags().BoolVar(&o.All, "all", o.All, "list every entry, the ReplicaSets' pod Events included")
	return cmd
}

// Complete takes the Rollout's name and resolves the namespace.
func (o *TimelineOptions) Complete(args []string) error {
	return o.completeRolloutName(args, &o.Name)
}

// Validate checks the flags and that there is a Rollout to tell of.
func (o *TimelineOptions) Validate() error {
	if err := o.validate(); err != nil {
		return err
	}
	if o.Filename == "" && o.Name == "" {
		return &ExitCodeError{Code: ExitUsage, Err: errors.New("name a Rollout (kubectl rolloutdoctor timeline NAME) or give -f FILE")}
	}
	return nil
}

// Run builds the timeline and prints it (and writes the HTML report).
func (o *TimelineOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	t, err := o.timeline(ctx)
	if err != nil {
		return err
	}
	file := ""
	if o.Filename != "" && o.Filename != "-" {
		file = o.Filename
	}
	if o.HTML != "" {
		if err := writeHTML(o.HTML, t, render.HTMLOptions{File: file, ToolVersion: Version}); err != nil {
			return err
		}
	}
	return o.print(t, func(w io.Writer, s render.Styles) error {
		return render.Timeline(w, t, s, render.TimelineOptions{Width: termWidth(o.streams.Out), File: file, All: o.All})
	})
}

// timeline reads the record, the snapshot or the cluster.
func (o *TimelineOptions) timeline(ctx context.Context) (*timeline.Timeline, error) {
	opt := timeline.Options{ControllerVersion: o.ControllerVersion}
	if o.Filename != "" {
		rec, snap, display, err := readRecordOrSnapshot(o.Filename, o.streams.In)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			opt.Source = "record " + display
			t, err := timeline.Record(rec, o.Namespace, o.Name, opt)
			return t, failure(err)
		}
		opt.Source = "file " + display
		t, err := timeline.Cluster(snap, o.Namespace, o.Name, opt)
		return t, failure(err)
	}
	conn, err := o.cluster()
	if err != nil {
		return nil, err
	}
	gopt := conn.Options
	gopt.Namespace, gopt.Name = o.Namespace, o.Name
	snap, err := gather.History(ctx, conn.Dynamic, gopt)
	if err != nil {
		return nil, failure(err)
	}
	opt.Source = "cluster " + gopt.Context
	t, err := timeline.Cluster(snap, o.Namespace, o.Name, opt)
	return t, failure(err)
}

// readRecordOrSnapshot reads -f: a record (rec set) or any other input
// (snap set).
func readRecordOrSnapshot(name string, stdin io.Reader) (*snapshot.Recording, *snapshot.Snapshot, string, error) {
	var r io.Reader = stdin
	display := "stdin"
	if name != "-" {
		f, err := snapshot.OpenInput(name)
		if err != nil {
			return nil, nil, "", &ExitCodeError{Code: ExitError, Err: err}
		}
		defer f.Close()
		r, display = f, name
	}
	rec, snap, err := snapshot.ReadAny(display, r)
	if err != nil {
		return nil, nil, "", &ExitCodeError{Code: ExitError, Err: err}
	}
	return rec, snap, display, nil
}

// writeHTML writes the report (replacing the file: it is the user's to
// name, and a report is regenerated from its record at will).
func writeHTML(path string, t *timeline.Timeline, opt render.HTMLOptions) error {
	f, err := os.Create(path)
	if err != nil {
		return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("cannot write %s: %w", path, unwrapPathError(err))}
	}
	if err := render.TimelineHTML(f, t, opt); err != nil {
		f.Close()
		return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("writing %s: %w", path, err)}
	}
	if err := f.Close(); err != nil {
		return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("writing %s: %w", path, err)}
	}
	return nil
}

// termWidth is the width of w when it is a terminal, else 0 (the
// renderer's default).
func termWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}
