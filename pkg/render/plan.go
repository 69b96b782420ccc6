package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/escape"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
)

// Verdict renders an escape verdict with its colour.
func Verdict(s Styles, v escape.Verdict) string {
	label := strings.ToUpper(string(v))
	switch v {
	case escape.Safe:
		return s.OK.Render(label)
	case escape.SafeWithCost:
		return s.Info.Render(label)
	case escape.Harmful:
		return s.Crit.Render(label)
	}
	return s.Dim.Render(label)
}

// Plan writes an escape plan for a person at a terminal.
func Plan(w io.Writer, p *escape.Plan, s Styles) error {
	var b strings.Builder
	head := fmt.Sprintf("controller %s (%s)", p.Controller.Assumed, controllerSource(p.Controller))
	if p.ResourceVersion != "" { // empty for a file
		head += ", resourceVersion " + p.ResourceVersion
	}
	fmt.Fprintf(&b, "%s %s/%s  %s\n", s.Title.Render("Escape plan for rollout"), p.Namespace, p.Name, s.Dim.Render(head))
	if p.Controller.Note != "" {
		fmt.Fprintf(&b, "  %s\n", s.Dim.Render(p.Controller.Note))
	}
	if p.ControllerNotRunning {
		fmt.Fprintf(&b, "  %s\n", s.Crit.Render("the controller that reconciles this Rollout is not running (RD166): nothing below happens, and no way out takes effect, until it does"))
	}
	fmt.Fprintf(&b, "\n%s %s\n", s.Bold.Render("If nothing is done:"), p.Now.Summary)
	if p.Now.IfNeverReady != "" {
		fmt.Fprintf(&b, "  %s\n", s.Warn.Render(p.Now.IfNeverReady))
	}
	if h := p.Hung; h != nil {
		fmt.Fprintf(&b, "  %s\n", s.Warn.Render(h.Text))
	}
	if r := p.Refused; r != nil {
		fmt.Fprintf(&b, "  %s\n", s.Warn.Render(r.Text))
	}
	if r := p.Restart; r != nil {
		// No way out ends a restart: it goes on beside whichever is taken.
		text := r.Rule + " " + r.Text + "; no way out below ends it"
		if r.Stalled {
			text = s.Warn.Render(text)
		}
		fmt.Fprintf(&b, "  restart: %s\n", text)
		if c := compactCites(r.Cites); c != "" {
			fmt.Fprintf(&b, "    %s\n", s.Dim.Render(c))
		}
	}
	if d := p.Deadline; d != nil {
		fmt.Fprintf(&b, "  %s\n", s.Warn.Render(d.Text))
		if c := compactCites(d.Cites); c != "" {
			fmt.Fprintf(&b, "    %s\n", s.Dim.Render(c))
		}
	}
	fmt.Fprintf(&b, "\n%s\n", s.Title.Render("Ways out"))
	for i, o := range p.Options {
		mark := " "
		if o.Action == p.Recommended {
			mark = s.OK.Render("▶")
		}
		fmt.Fprintf(&b, "%s %d. %-13s %s %s\n", mark, i+1, o.Action, Verdict(s, o.Verdict), o.Why)
		if o.Verdict != escape.NotApplicable && o.Effect.Summary != "" && !strings.Contains(o.Why, o.Effect.Summary) {
			fmt.Fprintf(&b, "       predicted: %s\n", o.Effect.Summary)
		}
		if o.Verdict != escape.NotApplicable && o.Action != escape.Wait && o.Effect.IfNeverReady != "" {
			// The same stop as doing nothing says so in a few words.
			what := o.Effect.IfNeverReady
			if what == p.Now.IfNeverReady {
				for _, stop := range []string{", scaling stops", ", the weight stays", ", the active Service stays"} {
					if i := strings.Index(what, stop); i >= 0 {
						what = what[:i] + ", it stops where doing nothing does (above)"
						break
					}
				}
			}
			fmt.Fprintf(&b, "       %s\n", s.Warn.Render(what))
		}
		if o.Analysis != "" && !strings.Contains(o.Why, o.Analysis) {
			fmt.Fprintf(&b, "       analysis: %s\n", o.Analysis)
		}
		if o.Note != "" && o.Verdict != escape.NotApplicable {
			fmt.Fprintf(&b, "       note: %s\n", o.Note)
		}
		if o.Command != "" && o.Verdict != escape.NotApplicable {
			fmt.Fprintf(&b, "       %s\n", s.Dim.Render("same requests as: "+o.Command))
		}
		if code := compactCites(o.Cites); code != "" {
			fmt.Fprintf(&b, "       %s\n", s.Dim.Render(code))
		}
	}
	fmt.Fprintf(&b, "\n%s %s\n", s.Bold.Render("Recommended:"), p.Reason)
	if code := compactCites(p.ReasonCites); code != "" {
		fmt.Fprintf(&b, "  %s\n", s.Dim.Render(code))
	}
	if g := p.GitOps; g != nil {
		fmt.Fprintf(&b, "\n%s %s (%s)\n", s.Warn.Render("GitOps:"), g.Tool+" "+g.Owner, g.Evidence)
		if g.UndoReverted {
			fmt.Fprintf(&b, "  - an undo would be reverted by the next sync; to stop that: %s\n", g.StopFight)
		}
		for _, n := range g.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// shortFile is a cited file's last two path elements
// (pkg/kubectl-argo-rollouts/cmd/undo/undo.go → undo/undo.go).
func shortFile(f string) string {
	if i := strings.LastIndex(f, "/"); i >= 0 {
		if j := strings.LastIndex(f[:i], "/"); j >= 0 {
			return f[j+1:]
		}
	}
	return f
}

// compactCites lists an option's citations on one line: file:line for the
// version, the files shortened to their last two path elements.
func compactCites(cites []upstream.Cite) string {
	var parts []string
	ver := ""
	for _, c := range cites {
		if c.Absent {
			continue
		}
		ver = string(c.Version)
		parts = append(parts, fmt.Sprintf("%s:%d", shortFile(c.File), c.Line))
	}
	if len(parts) == 0 {
		return ""
	}
	return "code (argo-rollouts " + ver + "): " + strings.Join(parts, ", ")
}
