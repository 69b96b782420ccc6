// Package render prints reports: human text styled with lipgloss (plain when
// colour is off), or a versioned JSON/YAML document.
package render

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"golang.org/x/term"
	"sigs.k8s.io/yaml"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
)

// UseColor decides colouring: "always", "never", or "auto" (a terminal, and
// NO_COLOR unset or empty — any non-empty NO_COLOR turns colour off).
func UseColor(mode string, w io.Writer) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
		if os.Getenv("NO_COLOR") != "" {
			return false, nil
		}
		if f, ok := w.(*os.File); ok {
			return term.IsTerminal(int(f.Fd())), nil
		}
		return false, nil
	}
	return false, fmt.Errorf("--color must be auto, always or never, not %q", mode)
}

// Styles holds every style in one place.
type Styles struct {
	r                                      *lipgloss.Renderer
	Title, Dim, Bold, Crit, Warn, Info, OK lipgloss.Style
}

// NewStyles makes styles for a writer; with color false they render plain text.
func NewStyles(w io.Writer, color bool) Styles {
	r := lipgloss.NewRenderer(w)
	if color {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return Styles{
		r:     r,
		Title: r.NewStyle().Bold(true),
		Dim:   r.NewStyle().Faint(true),
		Bold:  r.NewStyle().Bold(true),
		Crit:  r.NewStyle().Bold(true).Foreground(lipgloss.Color("196")),
		Warn:  r.NewStyle().Bold(true).Foreground(lipgloss.Color("214")),
		Info:  r.NewStyle().Foreground(lipgloss.Color("39")),
		OK:    r.NewStyle().Foreground(lipgloss.Color("42")),
	}
}

func (s Styles) sev(v diagnose.Severity) string {
	label := strings.ToUpper(v.String())
	switch v {
	case diagnose.Critical:
		return s.Crit.Render(label)
	case diagnose.Warning:
		return s.Warn.Render(label)
	}
	return s.Info.Render(label)
}

// Severity renders a severity label with its colour.
func Severity(s Styles, v diagnose.Severity) string { return s.sev(v) }

// JSON writes any document as indented JSON.
func JSON(w io.Writer, v interface{}) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// YAML writes any document as YAML (via its JSON form, so field names match).
func YAML(w io.Writer, v interface{}) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	y, err := yaml.JSONToYAML(b)
	if err != nil {
		return err
	}
	_, err = w.Write(y)
	return err
}

// when is a snapshot's time, or says there is none (input whose objects carry
// no timestamp).
func when(t time.Time) string {
	if t.IsZero() {
		return "time unknown"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// HumanOptions are what a person can ask the human view to show in full.
type HumanOptions struct {
	// Analysis shows every metric of every AnalysisRun with every
	// measurement the run keeps (by default: the worst metric whole, the
	// others in a line, the newest measurements).
	Analysis bool
}

// Human writes the report for a person at a terminal.
func Human(w io.Writer, rep *diagnose.Report, s Styles, opt HumanOptions) error {
	var b strings.Builder
	humanState(&b, rep, s)
	humanTraffic(&b, rep, s)
	humanPodShare(&b, rep, s)
	humanBlueGreen(&b, rep, s)
	if g := rep.ReplicaSetsUnread; g != nil {
		fmt.Fprintf(&b, "\n%s\n  %s\n", s.Title.Render("ReplicaSets"), s.Crit.Render("not read: "+g.String()))
		fmt.Fprintf(&b, "  so the pods each one has, what the controller does next and the findings that need them are not known: %s\n", g.Fix())
	}
	if len(rep.Sets) > 0 {
		fmt.Fprintf(&b, "\n%s\n", s.Title.Render("ReplicaSets"))
		for _, r := range rep.Sets {
			fmt.Fprintf(&b, "  %-7s %-40s rev %-3s created %s  %d/%d available\n", r.Role, r.Name, r.Revision, r.Created.UTC().Format("2006-01-02 15:04:05Z"), r.Available, r.Spec)
		}
	}
	humanAnalysis(&b, rep, s, opt.Analysis)
	humanExperiments(&b, rep, s)
	if len(rep.VersionDifferences) > 0 {
		fmt.Fprintf(&b, "\n%s\n", s.Title.Render("Where other controller versions differ"))
		for _, d := range rep.VersionDifferences {
			fmt.Fprintf(&b, "  %s\n", d)
		}
	}
	humanControllerLog(&b, rep, s)
	humanFindings(&b, rep, s)
	fmt.Fprintf(&b, "\n%s\n", s.Dim.Render("kubectl rolloutdoctor explain <ID> for the long form of a finding"))
	_, err := io.WriteString(w, b.String())
	return err
}

// humanState writes the header: where the Rollout is and which controller
// version the model assumed.
func humanState(b *strings.Builder, rep *diagnose.Report, s Styles) {
	st := rep.State
	taken := when(rep.TakenAt)
	if rep.TimeInferred && !rep.TakenAt.IsZero() {
		taken += ", inferred from the newest timestamp in the input: ages are lower bounds"
	}
	fmt.Fprintf(b, "%s %s\n", s.Title.Render("Rollout "+rep.Namespace+"/"+rep.Name), s.Dim.Render("("+rep.Source+", "+taken+")"))
	phase := st.Phase
	if st.Message != "" {
		phase += ": " + st.Message
	}
	fmt.Fprintf(b, "  phase     %s\n", phase)
	step := fmt.Sprintf("%d/%d", st.StepIndex, st.StepCount)
	if st.CurrentStep != "" {
		step += " (" + st.CurrentStep + ")"
	}
	flags := []string{}
	if st.Aborted {
		flags = append(flags, s.Crit.Render("ABORTED"))
	}
	if st.Paused {
		flags = append(flags, s.Warn.Render("PAUSED"))
	}
	if st.RollbackBack {
		flags = append(flags, s.Warn.Render("ROLLBACK WITHIN WINDOW"))
	}
	if st.PromoteFull {
		flags = append(flags, "PROMOTE-FULL")
	}
	if rep.Model != nil && rep.Model.BlueGreen != nil {
		// A blue-green Rollout has no steps: its state is the Services'.
		extra := ""
		if c := rep.Model.Inputs.BG.PreviewReplicaCount; c != nil {
			extra = fmt.Sprintf("  previewReplicaCount %d", *c)
		}
		fmt.Fprintf(b, "  %s  replicas %d%s  %s\n", st.Strategy, st.Replicas, extra, strings.Join(flags, " "))
	} else {
		fmt.Fprintf(b, "  %s  step %s  replicas %d  %s\n", st.Strategy, step, st.Replicas, strings.Join(flags, " "))
	}
	fmt.Fprintf(b, "  controller %s (%s)\n", rep.Controller.Assumed, controllerSource(rep.Controller))
}

// controllerSource says where the assumed controller version came from, in
// words (JSON and YAML carry the source tag).
func controllerSource(cv model.ControllerVersion) string {
	detected := ""
	if cv.Detected != "" && cv.Detected != string(cv.Assumed) {
		detected = " " + cv.Detected
	}
	switch cv.Source {
	case model.SourceFlag:
		return "set by " + cv.Source.Words() + detected
	case model.SourceImageTag, model.SourceLabel:
		s := "read from " + cv.Source.Words() + detected
		if cv.From != "" {
			s += " of " + cv.From
		}
		return s
	}
	s := "assumed: " + cv.Source.Words()
	var on []string
	if cv.Detected != "" {
		on = append(on, cv.Detected)
	}
	if cv.From != "" {
		on = append(on, "on "+cv.From)
	}
	if len(on) > 0 {
		s += " (" + strings.Join(on, " ") + ")"
	}
	return s
}

// humanPodShare writes a canary's share of the requests without
// trafficRouting: its share of the ready pods.
func humanPodShare(b *strings.Builder, rep *diagnose.Report, s Styles) {
	p := rep.PodShare
	if p == nil || rep.ReplicaSetsUnread != nil {
		return
	}
	fmt.Fprintf(b, "\n%s %s\n", s.Title.Render("Traffic"), s.Dim.Render("no trafficRouting: a Service that selects both spreads requests over every ready pod"))
	counts := fmt.Sprintf("canary %d, stable %d", p.StepCanary, p.StepStable)
	if t := p.StepCanary + p.StepStable; t > 0 {
		counts += fmt.Sprintf(" → %d%%", int64(p.StepCanary)*100/int64(t))
	}
	sized := fmt.Sprintf("(setWeight %d%%: the controller sizes %s)", p.SetWeight, counts)
	if rep.State.Aborted {
		sized = "(aborted: the controller sizes it for 0%: " + counts + ")"
	}
	all := p.CanaryReady + p.OtherReady
	fmt.Fprintf(b, "  canary %d of %d ready pods ← %d%% of requests   %s\n", p.CanaryReady, all, p.Percent, s.Dim.Render(sized))
	if p.OlderReady > 0 {
		fmt.Fprintf(b, "  %s\n", s.Warn.Render(fmt.Sprintf("older revisions %d of %d ready pods ← %d%% of requests (replaced mid-rollout: the controller scales them down before it scales the canary or stable down)",
			p.OlderReady, all, int64(p.OlderReady)*100/int64(all))))
	}
	var moves []string
	if p.NextStable != p.StableSpec {
		moves = append(moves, fmt.Sprintf("stable %d → %d", p.StableSpec, p.NextStable))
	}
	if p.NextCanary != p.CanarySpec {
		moves = append(moves, fmt.Sprintf("canary %d → %d", p.CanarySpec, p.NextCanary))
	}
	for _, m := range p.OlderMoves {
		moves = append(moves, fmt.Sprintf("%s (rev %s) %d → %d", m.Name, m.Revision, m.From, m.To))
	}
	switch {
	case len(moves) > 0:
		fmt.Fprintf(b, "  next pass: %s   %s\n", strings.Join(moves, ", "), s.Dim.Render(fmt.Sprintf("(one ReplicaSet a pass, the stable first; maxSurge %d, maxUnavailable %d)", p.MaxSurge, p.MaxUnavailable)))
	case p.Waits != "":
		fmt.Fprintf(b, "  next pass: %s\n", p.Waits)
	}
	var named []string
	if p.StableService != "" {
		named = append(named, "stable Service "+p.StableService+" only the stable's")
	}
	if p.CanaryService != "" {
		named = append(named, "canary Service "+p.CanaryService+" only the canary's")
	}
	if len(named) > 0 {
		fmt.Fprintf(b, "  %s\n", s.Warn.Render("but the controller points "+strings.Join(named, ", ")+" pods: requests sent to those go by Service, not by pod count"))
	}
}

// humanTraffic writes where traffic is against the pods that carry it, in
// red where the weight needs more pods than are available.
func humanTraffic(b *strings.Builder, rep *diagnose.Report, s Styles) {
	t := rep.Traffic
	if t == nil {
		return
	}
	st := rep.State
	fmt.Fprintf(b, "\n%s %s\n", s.Title.Render("Traffic"), s.Dim.Render(t.Router))
	// Available of the ReplicaSet's own size (as in the ReplicaSet table),
	// and what the weight needs when the pods fall short of it.
	capStyle := func(avail, spec, weight int32) string {
		if rep.ReplicaSetsUnread != nil {
			return s.Warn.Render(fmt.Sprintf("?/? available ← %d%%", weight))
		}
		txt := fmt.Sprintf("%d/%d available ← %d%%", avail, spec, weight)
		if st.Replicas < 0 { // a rejected spec: no desired count to compare with
			return s.OK.Render(txt)
		}
		need := (int64(weight)*int64(st.Replicas) + int64(t.MaxWeight) - 1) / int64(t.MaxWeight)
		if weight > 0 && int64(avail) < need {
			return s.Crit.Render(fmt.Sprintf("%s (needs %d of %d)", txt, need, st.Replicas))
		}
		return s.OK.Render(txt)
	}
	// What the router applies: the status's weights, or its own where the
	// router objects say otherwise (RD107).
	cw, sw, note := t.CanaryWeight, t.StableWeight, ""
	if t.RouterWeight != nil && *t.RouterWeight != t.CanaryWeight {
		cw, sw = *t.RouterWeight, t.MaxWeight-*t.RouterWeight
		note = s.Warn.Render(fmt.Sprintf("  (the router's weight; the status says canary %d%%)", t.CanaryWeight))
	}
	fmt.Fprintf(b, "  stable %s   canary %s%s\n", capStyle(t.StableAvailable, t.StableSpec, sw), capStyle(t.CanaryAvailable, t.CanarySpec, cw), note)
	humanRouter(b, rep, s)
	if rep.ReplicaSetsUnread != nil {
		b.WriteString("  next pass: " + s.Warn.Render("not known: the ReplicaSets were not read") + "\n")
		return
	}
	// The branch in words; its tag is nextBranch in JSON and YAML.
	next := fmt.Sprintf("  next pass: canary %d%% — %s", t.NextWeight, model.Branch(t.NextBranch).Words())
	if len(t.HeldGates) > 0 {
		var held []string
		idle := true
		for _, g := range t.HeldGates {
			if g.Idle {
				held = append(held, model.GateWords(g.Name)+": the router is not written, but the weight already stands")
				continue
			}
			idle = false
			held = append(held, model.GateWords(g.Name)+": "+g.Effect.Words())
		}
		if idle {
			next += "  held by " + strings.Join(held, "; ")
		} else {
			next += s.Warn.Render("  held by " + strings.Join(held, "; "))
		}
	}
	b.WriteString(next + "\n")
	if t.NextWhy != "" {
		fmt.Fprintf(b, "    %s\n", t.NextWhy)
	}
	switch {
	case strings.Contains(t.NextPromotes, "(Initial deploy)"):
		// Not the end of the steps: the stable ReplicaSet is gone (RD169).
		fmt.Fprintf(b, "    %s\n", s.Warn.Render(t.NextPromotes))
	case t.NextPromotes != "":
		fmt.Fprintf(b, "    %s\n", t.NextPromotes)
	}
	if rep.Model != nil {
		for _, f := range rep.Model.Forecast {
			if f.Event != "" {
				fmt.Fprintf(b, "  then: %s\n", f.Event)
			}
		}
	}
}

// humanRouter writes what each router object says: where the weights are,
// each backend's, and whether the status agrees; who wrote it last.
func humanRouter(b *strings.Builder, rep *diagnose.Report, s Styles) {
	t := rep.Traffic
	if t.Objects == nil {
		return
	}
	for _, o := range t.Objects.Objects {
		line := "  router " + o.Ref()
		switch {
		case o.Missing:
			b.WriteString(line + s.Crit.Render(" does not exist") + "\n")
			continue
		case o.Unread:
			b.WriteString(line + s.Warn.Render(" not read (RD110 says why): its weights are not known") + "\n")
			continue
		case o.NotOwned:
			line += s.Crit.Render(" (not the Rollout's: the controller will not write it)")
		}
		var parts []string
		for _, be := range o.Backends {
			parts = append(parts, fmt.Sprintf("%s %d", be.Name, be.Weight))
		}
		if len(parts) > 0 {
			line += " " + o.Field + ": " + strings.Join(parts, ", ")
			if o.Total != 100 || o.ExpectedTotal != 100 {
				line += fmt.Sprintf(" (of %d)", o.Total)
			}
		} else if len(o.Notes) == 0 {
			line += " " + o.Field + ": no weights"
		}
		if o.Canary != nil {
			if int32(*o.Canary) == t.CanaryWeight && (o.Total == o.ExpectedTotal) {
				line += s.OK.Render(" = status")
			} else {
				line += s.Warn.Render(fmt.Sprintf(" ≠ status canary %d", t.CanaryWeight))
			}
		}
		if o.Stickiness > 0 {
			line += fmt.Sprintf("; target-group stickiness %d s", o.Stickiness)
		}
		if w := o.Writer; w != nil && !w.Time.IsZero() {
			line += s.Dim.Render(fmt.Sprintf("; written by %s at %s", w.Manager, w.Time.UTC().Format("2006-01-02 15:04:05Z")))
		}
		b.WriteString(line + "\n")
		for _, c := range o.Conditions {
			if c.Status != "True" {
				fmt.Fprintf(b, "    %s\n", s.Crit.Render(fmt.Sprintf("%s=%s for %s: %s %s", c.Type, c.Status, c.Parent, c.Reason, c.Message)))
			}
		}
		for _, n := range o.Notes {
			fmt.Fprintf(b, "    %s\n", s.Warn.Render(n))
		}
	}
	for _, mr := range t.Objects.ManagedRoutes {
		match := "every request (no match)"
		if mr.Match != "" {
			match = "requests matching " + mr.Match
		}
		switch {
		case mr.Mirror:
			fmt.Fprintf(b, "  managed route %s (%s): %g%% of %s copied to the canary\n", mr.Name, mr.Object, mr.MirrorPercent, match)
		case mr.CanaryWeight > 0:
			fmt.Fprintf(b, "  managed route %s (%s): %s → canary %d of %d, whatever the weight\n", mr.Name, mr.Object, match, mr.CanaryWeight, mr.RouteTotal)
		default:
			fmt.Fprintf(b, "  managed route %s (%s): %s, no canary destination\n", mr.Name, mr.Object, match)
		}
	}
	for _, p := range t.Objects.Plugins {
		switch {
		case !p.Known:
			fmt.Fprintf(b, "  plugin %s %s\n", p.Name, s.Dim.Render("(the controller's ConfigMap was not read)"))
		case !p.Configured:
			fmt.Fprintf(b, "  plugin %s %s\n", p.Name, s.Crit.Render("not in the controller's trafficRouterPlugins"))
		default:
			fmt.Fprintf(b, "  plugin %s %s\n", p.Name, s.Dim.Render("from "+p.Location))
		}
	}
	if v := t.Objects.Verify; v != nil {
		state := "not recorded"
		if v.Verified != nil {
			state = fmt.Sprint(*v.Verified)
		}
		fmt.Fprintf(b, "  ALB weight verification on (%s): verified %s\n", v.Flag, state)
	}
}

// humanFindings writes the findings in full and the pod checks as a
// summary: `pods` shows their evidence.
func humanFindings(b *strings.Builder, rep *diagnose.Report, s Styles) {
	var main, pods []diagnose.Finding
	for _, f := range rep.Findings {
		if f.PodCheck() {
			pods = append(pods, f)
		} else {
			main = append(main, f)
		}
	}
	fmt.Fprintf(b, "\n%s\n", s.Title.Render("Findings"))
	switch {
	case len(main) == 0 && len(pods) > 0:
		// Never "none" above a critical: the pod findings follow.
		fmt.Fprintf(b, "  %s\n", s.Dim.Render("none about the Rollout itself; its pods and traffic path below"))
	case len(main) == 0:
		fmt.Fprintf(b, "  %s\n", s.OK.Render("none"))
	}
	findings(b, main, s)
	if len(pods) > 0 {
		fmt.Fprintf(b, "\n%s %s\n", s.Title.Render("Pods and traffic path"), s.Dim.Render("(details: kubectl rolloutdoctor pods "+rep.Name+" -n "+rep.Namespace+")"))
		for _, f := range pods {
			fmt.Fprintf(b, "  %s %s %s\n", s.sev(f.Severity), s.Bold.Render(f.ID), f.Message)
		}
	}
}

// findings writes findings with their evidence, citations and fix.
func findings(b *strings.Builder, fs []diagnose.Finding, s Styles) {
	for _, f := range fs {
		fmt.Fprintf(b, "  %s %s %s\n", s.sev(f.Severity), s.Bold.Render(f.ID), f.Message)
		for _, e := range f.Evidence {
			field := e.Field
			if field != "" {
				field = " " + field
			}
			fmt.Fprintf(b, "      %s\n", s.Dim.Render(fmt.Sprintf("%s%s = %s", e.Object, field, e.Value)))
		}
		for _, c := range f.Cites {
			fmt.Fprintf(b, "      %s\n", s.Dim.Render("code: "+c.String()))
		}
		if f.Remediation != "" {
			fmt.Fprintf(b, "      fix: %s\n", f.Remediation)
			if f.Escape != "" {
				fmt.Fprintf(b, "      escape now: %s\n", f.Escape)
			}
		}
	}
}
