package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/escape"
)

// The text of escape's guided mode, its writes and its watch. Prompts go to
// stdout (a person reads them there); notes on what was written go to
// whatever writer the caller passes (stderr, so stdout stays the answer).

// ChoosePrompt asks which way out to take.
func ChoosePrompt(w io.Writer, p *escape.Plan) {
	fmt.Fprintf(w, "\nChoose an action [1-%d, Enter for %s, q to quit]: ", len(p.Options), p.Recommended)
}

// NotAnAction answers a choice that names no action.
func NotAnAction(w io.Writer, line string) {
	fmt.Fprintf(w, "not an action: %q\n", line)
}

// OptionDetail shows the chosen option before the confirmation: verdict,
// prediction and the exact requests with their precondition.
func OptionDetail(w io.Writer, p *escape.Plan, o *escape.Option, s Styles) {
	fmt.Fprintf(w, "\n%s %s — %s\n", s.Title.Render(string(o.Action)), Verdict(s, o.Verdict), o.Why)
	fmt.Fprintf(w, "  predicted: %s\n", o.Effect.Summary)
	if o.Analysis != "" {
		fmt.Fprintf(w, "  analysis: %s\n", o.Analysis)
	}
	for _, r := range o.Requests {
		b, _ := escape.WithPrecondition(r.PatchType, r.Body, p.ResourceVersion)
		fmt.Fprintf(w, "  PATCH %s %s/%s%s (%s)\n    %s\n", strings.ToLower(r.Kind), p.Namespace, r.Name, subresource(r.Subresource), r.PatchType, b)
	}
	if p.GitOps != nil && o.Action == escape.Undo {
		fmt.Fprintf(w, "  %s %s\n", s.Warn.Render("GitOps:"), p.GitOps.Notes[0])
	}
	if g := p.GitOps; g != nil && len(g.RouterFought) > 0 && (o.Action == escape.Promote || o.Action == escape.Abort || o.Action == escape.PromoteFull) {
		fmt.Fprintf(w, "  %s %s\n", s.Warn.Render("GitOps:"), g.Notes[1])
	}
}

// ConfirmPrompt asks for the Rollout's name, the typed confirmation.
func ConfirmPrompt(w io.Writer, p *escape.Plan) {
	fmt.Fprintf(w, "Type the Rollout's name (%s) to apply, anything else to cancel: ", p.Name)
}

// Cancelled says that the confirmation was not given.
func Cancelled(w io.Writer) {
	fmt.Fprintln(w, "cancelled: nothing was written")
}

// SendsNothing says that the option has no request to send.
func SendsNothing(w io.Writer, o *escape.Option) {
	fmt.Fprintf(w, "%s sends nothing: %s\n", o.Action, o.Why)
}

// Requests writes a client-side dry run: the requests as they would go out.
func Requests(w io.Writer, p *escape.Plan, a escape.Action, reqs []escape.Prepared) {
	fmt.Fprintf(w, "client dry run of %s (nothing sent):\n", a)
	for _, r := range reqs {
		fmt.Fprintf(w, "  PATCH %s %s/%s%s (%s)\n    %s\n", strings.ToLower(r.Kind), p.Namespace, r.Name, subresource(r.Subresource), r.PatchType, r.SentBody)
	}
}

// Replanned notes a 409 that was re-planned and still holds.
func Replanned(w io.Writer, from, to *escape.Plan, o *escape.Option) {
	fmt.Fprintf(w, "the Rollout changed since it was read (resourceVersion %s → %s); re-planned: %s is still %s with the same requests\n",
		from.ResourceVersion, to.ResourceVersion, o.Action, o.Verdict)
}

// ServerDryRun notes what the API server accepted with dryRun=All.
func ServerDryRun(w io.Writer, a escape.Action, sent []escape.Sent) {
	fmt.Fprintf(w, "server dry run: the API server accepted %d request(s) of %s; nothing was persisted\n", len(sent), a)
}

// Applied writes each request that was applied, with the body sent.
func Applied(w io.Writer, a escape.Action, sent []escape.Sent) {
	for _, s := range sent {
		fmt.Fprintf(w, "applied %s: %s %s%s %s\n", a, strings.ToLower(s.Kind), s.Name, subresource(s.Subresource), string(s.Body))
	}
}

// WatchingFor opens the watch with the predicted end state.
func WatchingFor(w io.Writer, want escape.Effect) {
	fmt.Fprintf(w, "\nwatching for: %s\n", want.Summary)
}

// Observed writes one observation of the watch, with its time of day.
func Observed(w io.Writer, o escape.Observation) {
	fmt.Fprintf(w, "%s  %s\n", o.At.Format("15:04:05"), ObservationLine(o))
}

// ObservationLine is an observation in one line: traffic, step, phase,
// abort flag and stable ReplicaSet.
func ObservationLine(o escape.Observation) string {
	traffic := ""
	if o.Routed {
		traffic = fmt.Sprintf("weight %d%% canary (%d available) / stable %d available; ", o.CanaryWeight, o.CanaryAvailable, o.StableAvailable)
	}
	return fmt.Sprintf("%sstep %d/%d, phase %s, aborted %v, stable %s", traffic, o.StepIndex, o.StepCount, o.Phase, o.Aborted, o.Stable)
}

// Outcome closes the watch: as predicted, or not within the timeout.
func Outcome(w io.Writer, out *escape.Outcome, want escape.Effect, timeout time.Duration) {
	if out.Reached {
		fmt.Fprintf(w, "outcome: as predicted — %s\n", ObservationLine(out.Last))
		return
	}
	fmt.Fprintf(w, "outcome: not reached within %s. Predicted: %s. Observed: %s\n", timeout, want.Summary, ObservationLine(out.Last))
}

func subresource(s string) string {
	if s == "" {
		return ""
	}
	return "/" + s
}
