package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
)

// Pods writes the pods report for a person at a terminal.
func Pods(w io.Writer, rep *diagnose.PodReport, s Styles) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", s.Title.Render(rep.WorkloadKind+" "+rep.Namespace+"/"+rep.Name+" — pods and traffic path"),
		s.Dim.Render("("+rep.Source+", "+when(rep.TakenAt)+")"))
	fmt.Fprintf(&b, "  strategy %s  replicas %d", rep.Strategy, rep.Replicas)
	if rep.Assumed != "" {
		fmt.Fprintf(&b, "  controller %s", rep.Assumed)
	}
	b.WriteString("\n")

	podsTemplate(&b, rep, s)
	podsServices(&b, rep, s)
	podsTable(&b, rep, s)
	podsGrace(&b, rep, s)
	fmt.Fprintf(&b, "\n%s\n", s.Title.Render("Findings"))
	if len(rep.Findings) == 0 {
		fmt.Fprintf(&b, "  %s\n", s.OK.Render("none"))
	}
	findings(&b, rep.Findings, s)
	for _, gp := range rep.Gaps {
		fmt.Fprintf(&b, "  %s\n", s.Warn.Render("not read: "+gp.String()))
	}
	fmt.Fprintf(&b, "\n%s\n", s.Dim.Render("kubectl rolloutdoctor explain <ID> for the long form; during a drain watch 5xx and connection resets together — retries hide failures from 5xx alone"))
	_, err := io.WriteString(w, b.String())
	return err
}

// podsTemplate writes the probes, preStop hooks and grace period the
// template gives every pod.
func podsTemplate(b *strings.Builder, rep *diagnose.PodReport, s Styles) {
	t := rep.Template
	fmt.Fprintf(b, "\n%s\n", s.Title.Render("Template"))
	grace := fmt.Sprintf("%d s", t.TerminationGracePeriodSeconds)
	if t.GraceDefaulted {
		grace += " (default)"
	}
	fmt.Fprintf(b, "  terminationGracePeriodSeconds %s\n", grace)
	for _, c := range t.Containers {
		fmt.Fprintf(b, "  container %s\n", s.Bold.Render(c.Name))
		fmt.Fprintf(b, "    readiness  %s\n", orMissing(s, c.Readiness))
		fmt.Fprintf(b, "    liveness   %s\n", orMissing(s, c.Liveness))
		fmt.Fprintf(b, "    preStop    %s\n", orMissing(s, c.PreStop))
	}
	if len(t.ReadinessGates) > 0 {
		fmt.Fprintf(b, "  readiness gates %s\n", strings.Join(t.ReadinessGates, ", "))
	}
	if t.IstioSidecar != "" {
		fmt.Fprintf(b, "  istio sidecar: %s; terminationDrainDuration %s\n", t.IstioSidecar, t.IstioDrain)
	}
}

// podsServices writes every Service in the traffic path with its
// endpoints, red where traffic is sent to none that are ready.
func podsServices(b *strings.Builder, rep *diagnose.PodReport, s Styles) {
	if len(rep.Services) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n", s.Title.Render("Services"))
	for _, sv := range rep.Services {
		line := fmt.Sprintf("  %-28s %-12s", sv.Name, sv.Type)
		if sv.ExternalTrafficPolicy != "" {
			line += " eTP " + sv.ExternalTrafficPolicy
		}
		if sv.Weight != nil {
			line += fmt.Sprintf("  weight %d%%", *sv.Weight)
		}
		eps := fmt.Sprintf("  endpoints %d ready, %d not ready, %d terminating", sv.Ready, sv.NotReady, sv.Terminating)
		switch {
		case !sv.EndpointsRead:
			eps = s.Dim.Render("  endpoints not in the snapshot")
		case sv.Ready == 0 && (sv.Weight == nil || *sv.Weight > 0):
			eps = s.Crit.Render(eps)
		}
		line += eps
		if len(sv.Ingresses) > 0 {
			line += "  ← Ingress " + strings.Join(sv.Ingresses, ", ")
		}
		b.WriteString(line + "\n")
	}
}

// podsTable writes each pod against its node: node readiness and Lease
// age, endpoint conditions, unmet readiness gates.
func podsTable(b *strings.Builder, rep *diagnose.PodReport, s Styles) {
	if len(rep.Pods) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n", s.Title.Render("Pods"))
	// ROLE and PHASE as wide as their longest value ("experiment",
	// "Terminating"), so the columns after them stay aligned.
	roleW, phaseW := 7, 8
	for _, p := range rep.Pods {
		roleW = max(roleW, len(p.Role))
		if p.Terminating {
			phaseW = max(phaseW, len("Terminating"))
		}
		phaseW = max(phaseW, len(p.Phase))
	}
	fmt.Fprintf(b, "  %s\n", s.Dim.Render(fmt.Sprintf("%-44s %-*s %-*s %-6s %-20s %-10s %-9s %s", "NAME", roleW, "ROLE", phaseW, "PHASE", "READY", "NODE", "NODE-READY", "LEASE-AGE", "ENDPOINTS")))
	for _, p := range rep.Pods {
		ready := "false"
		if p.Ready {
			ready = "true"
		}
		phase := p.Phase
		if p.Terminating {
			phase = "Terminating"
		}
		nr := p.NodeReady
		if nr != "" && nr != "True" && p.Ready {
			nr = s.Crit.Render(fmt.Sprintf("%-10s", nr))
		} else {
			nr = fmt.Sprintf("%-10s", nr)
		}
		lease := fmt.Sprintf("%-9s", p.LeaseAge)
		if p.LeaseStale && p.Ready {
			lease = s.Crit.Render(lease)
		}
		line := fmt.Sprintf("  %-44s %-*s %-*s %-6s %-20s %s %s %s", p.Name, roleW, p.Role, phaseW, phase, ready, p.Node, nr, lease, p.Endpoints)
		if p.GatesUnmet != "" {
			line += s.Warn.Render("  gates unmet: " + p.GatesUnmet)
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
}

// podsGrace writes the grace-period arithmetic with the user's numbers and
// the gap to the template's values.
func podsGrace(b *strings.Builder, rep *diagnose.PodReport, s Styles) {
	t := rep.Template
	g := rep.Grace
	fmt.Fprintf(b, "\n%s\n", s.Title.Render("Grace period"))
	fmt.Fprintf(b, "  %s\n", s.Dim.Render(g.Formula))
	for _, st := range g.Steps {
		fmt.Fprintf(b, "  %s\n", st)
	}
	if g.Known {
		cur := t.TerminationGracePeriodSeconds
		gap := "covers it"
		if cur < g.GracePeriod {
			gap = s.Warn.Render(fmt.Sprintf("%d s short", g.GracePeriod-cur))
		}
		var now []string
		for _, c := range t.Containers {
			if c.PreStop != "" {
				now = append(now, c.Name+" "+c.PreStop)
			}
		}
		if len(now) == 0 {
			now = []string{"none"}
		}
		fmt.Fprintf(b, "  recommended: terminationGracePeriodSeconds %d (now %d: %s), preStop %d s (now %s)", g.GracePeriod, cur, gap, g.PreStop, strings.Join(now, ", "))
		if g.TerminationDrain > 0 {
			fmt.Fprintf(b, ", istio terminationDrainDuration %ds (now %ds)", g.TerminationDrain, g.IstioDrain)
		}
		b.WriteString("\n")
	}
	for _, a := range g.Assumptions {
		fmt.Fprintf(b, "  %s\n", s.Dim.Render("note: "+a))
	}
}

func orMissing(s Styles, v string) string {
	if v == "" {
		return s.Warn.Render("none")
	}
	return v
}
