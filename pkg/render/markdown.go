package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/escape"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// CardOptions say what an incident card is for.
type CardOptions struct {
	// Command is the rolloutdoctor command that made the card, for its
	// last line ("diagnose", "escape").
	Command string
	// AllOptions lists every way out with its verdict (escape's card);
	// otherwise only the recommended one (diagnose's).
	AllOptions bool
	// PlanError is why no way out could be planned (p is then nil).
	PlanError error
}

// maxCardCites bounds the citations of a card: it is pasted into a
// channel, and `diagnose` has them all.
const maxCardCites = 6

// Card writes the incident card of a diagnosis and its escape plan: the
// state in one line, the worst finding, the recommended way out with its
// verdict and the exact command, and the controller source behind them. It
// is GitHub-flavoured Markdown that keeps to what chat tools render too —
// bold, code spans, code blocks, lists and links; no headings, tables or
// HTML — so it reads the same pasted into an issue or a Slack message.
func Card(w io.Writer, rep *diagnose.Report, p *escape.Plan, opt CardOptions) error {
	var b strings.Builder
	worst := rep.Worst()
	sev := "OK"
	if worst > 0 {
		sev = strings.ToUpper(worst.String())
	}
	fmt.Fprintf(&b, "%s **%s** · rollout `%s/%s` — %s\n", cardMark(worst), sev, rep.Namespace, rep.Name, cardState(rep))
	if t := cardTraffic(rep); t != "" {
		fmt.Fprintf(&b, "- traffic: %s\n", t)
	}
	cites := []upstream.Cite{}
	if len(rep.Findings) == 0 {
		b.WriteString("- findings: none\n")
	} else {
		f := rep.Findings[0]
		fmt.Fprintf(&b, "- worst finding: **%s** %s\n", f.ID, f.Message)
		if others := otherFindings(rep.Findings[1:]); others != "" {
			fmt.Fprintf(&b, "- also: %s\n", others)
		}
		cites = append(cites, f.Cites...)
	}
	cites = append(cites, cardWayOut(&b, rep, p, opt)...)
	if code := cardCites(cites); code != "" {
		fmt.Fprintf(&b, "- code (argo-rollouts %s): %s\n", rep.Controller.Assumed, code)
	}
	foot := []string{"`kubectl rolloutdoctor " + opt.Command + " " + rep.Name + " -n " + rep.Namespace + "`"}
	foot = append(foot, "controller "+string(rep.Controller.Assumed)+" ("+controllerSource(rep.Controller)+")")
	if rep.Source != "" {
		foot = append(foot, rep.Source)
	}
	foot = append(foot, when(rep.TakenAt))
	if len(rep.Findings) > 0 {
		foot = append(foot, "`kubectl rolloutdoctor explain "+rep.Findings[0].ID+"` for the long form")
	}
	fmt.Fprintf(&b, "\n_%s_\n", strings.Join(foot, " · "))
	_, err := io.WriteString(w, b.String())
	return err
}

// cardMark is a coloured circle for the worst severity: chat tools and
// GitHub both render the emoji, and it survives a paste without colour.
func cardMark(s diagnose.Severity) string {
	switch s {
	case diagnose.Critical:
		return "🔴"
	case diagnose.Warning:
		return "🟠"
	case diagnose.Info:
		return "🔵"
	}
	return "🟢"
}

// cardState is the Rollout's state in one line: phase, step, flags.
func cardState(rep *diagnose.Report) string {
	st := rep.State
	parts := []string{st.Phase}
	if st.Message != "" {
		parts[0] += " (" + st.Message + ")"
	}
	if st.Strategy == "canary" {
		step := fmt.Sprintf("canary step %d/%d", st.StepIndex, st.StepCount)
		if st.CurrentStep != "" {
			step += " (" + st.CurrentStep + ")"
		}
		parts = append(parts, step)
	} else {
		parts = append(parts, st.Strategy)
	}
	if st.Aborted {
		parts = append(parts, "**aborted**")
	}
	if st.Paused {
		parts = append(parts, "paused")
	}
	if st.RollbackBack {
		parts = append(parts, "rollback within the window")
	}
	return strings.Join(parts, ", ")
}

// cardTraffic is where the traffic is against the pods that carry it (a
// traffic-routed canary), else the ReplicaSets' availability.
func cardTraffic(rep *diagnose.Report) string {
	if t := rep.Traffic; t != nil {
		side := func(name string, weight, avail, spec int32) string {
			if rep.ReplicaSetsUnread != nil {
				return fmt.Sprintf("%s **%d%%** on ? available (ReplicaSets not read)", name, weight)
			}
			s := fmt.Sprintf("%s **%d%%** on %d/%d available", name, weight, avail, spec)
			if rep.State.Replicas > 0 && t.MaxWeight > 0 && weight > 0 {
				need := (int64(weight)*int64(rep.State.Replicas) + int64(t.MaxWeight) - 1) / int64(t.MaxWeight)
				if int64(avail) < need {
					s += fmt.Sprintf(" (needs %d)", need)
				}
			}
			return s
		}
		out := side("canary", t.CanaryWeight, t.CanaryAvailable, t.CanarySpec) + " · " + side("stable", t.StableWeight, t.StableAvailable, t.StableSpec)
		if t.Objects != nil {
			for _, mr := range t.Objects.ManagedRoutes {
				if mr.CanaryWeight > 0 && !mr.Mirror {
					out += fmt.Sprintf(" · header route `%s` → canary, whatever the weight", mr.Name)
				}
			}
		}
		return out
	}
	var parts []string
	if p := rep.PodShare; p != nil && rep.ReplicaSetsUnread == nil {
		parts = append(parts, fmt.Sprintf("canary **%d%%** of ready pods (%d/%d; no trafficRouting)", p.Percent, p.CanaryReady, p.CanaryReady+p.OtherReady))
	}
	for _, r := range rep.Sets {
		if r.Role == "old" && r.Spec == 0 && r.Available == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s `%s` %d/%d available", r.Role, r.Name, r.Available, r.Spec))
	}
	return strings.Join(parts, " · ")
}

// otherFindings lists the remaining findings by ID, grouped by severity:
// "RD201 (critical); RD103, RD301 (warning)".
func otherFindings(fs []diagnose.Finding) string {
	var groups []string
	for i := 0; i < len(fs); {
		j := i
		var ids []string
		for ; j < len(fs) && fs[j].Severity == fs[i].Severity; j++ {
			ids = append(ids, fs[j].ID)
		}
		groups = append(groups, strings.Join(ids, ", ")+" ("+fs[i].Severity.String()+")")
		i = j
	}
	return strings.Join(groups, "; ")
}

// cardWayOut writes the recommended way out (every option with
// AllOptions) and returns the citations behind it.
func cardWayOut(b *strings.Builder, rep *diagnose.Report, p *escape.Plan, opt CardOptions) []upstream.Cite {
	if p == nil {
		if opt.PlanError != nil {
			fmt.Fprintf(b, "- way out: none planned — %v\n", opt.PlanError)
		}
		return nil
	}
	if opt.AllOptions {
		fmt.Fprintf(b, "- if nothing is done: %s\n", p.Now.Summary)
	}
	o, ok := p.Option(p.Recommended)
	if !ok {
		return nil
	}
	label := "way out"
	if p.AllHarmful {
		label = "no safe way out; least harmful"
	}
	if h := p.Hung; h != nil {
		fmt.Fprintf(b, "- first: %s — %s\n", h.Fix, h.Text)
	}
	if r := p.Refused; r != nil {
		fmt.Fprintf(b, "- pods refused: %s — %s\n", r.Text, r.Fix)
	}
	fmt.Fprintf(b, "- %s: **%s** (%s) — %s\n", label, o.Action, o.Verdict, o.Why)
	if r := p.Restart; r != nil && r.Stalled {
		fmt.Fprintf(b, "- restart: %s — %s\n", r.Text, r.Fix)
	}
	if o.Command != "" {
		fmt.Fprintf(b, "  ```\n  %s\n  ```\n", o.Command)
		fmt.Fprintf(b, "  or `kubectl rolloutdoctor escape %s -n %s --do %s`, which re-checks the plan against the live Rollout before it writes\n", p.Name, p.Namespace, o.Action)
	}
	if opt.AllOptions {
		var others []string
		for _, x := range p.Options {
			if x.Action == o.Action {
				continue
			}
			v := string(x.Verdict)
			if x.Verdict == escape.Harmful {
				v = "**" + v + "**"
			}
			others = append(others, fmt.Sprintf("%s %s", x.Action, v))
		}
		fmt.Fprintf(b, "- other ways out: %s\n", strings.Join(others, " · "))
	}
	return append(append([]upstream.Cite(nil), o.Cites...), p.ReasonCites...)
}

// cardCites links the first citations, each once, to the cited line at the
// release tag; the text is the file's last two path elements, as the human
// view's compact citations.
func cardCites(cites []upstream.Cite) string {
	seen := map[string]bool{}
	var out []string
	for _, c := range cites {
		u := c.URL()
		if u == "" || seen[u] {
			continue
		}
		seen[u] = true
		if len(out) == maxCardCites {
			out = append(out, "…")
			break
		}
		out = append(out, fmt.Sprintf("[%s:%d](%s)", shortFile(c.File), c.Line, u))
	}
	return strings.Join(out, ", ")
}
