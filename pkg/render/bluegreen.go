package render

import (
	"fmt"
	"strings"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
)

// humanBlueGreen writes where a blue-green update stands: what each Service
// selects (its live selector and endpoints), who must act, the old
// ReplicaSets' scale-down deadlines, and what the controller will do next.
func humanBlueGreen(b *strings.Builder, rep *diagnose.Report, s Styles) {
	if rep.Model == nil || rep.Model.BlueGreen == nil {
		return
	}
	a := rep.Model.BlueGreen
	in := rep.Model.Inputs
	fmt.Fprintf(b, "\n%s %s\n", s.Title.Render("Blue-green"), a.StateWhy)
	if a.Act != "" {
		fmt.Fprintf(b, "  who must act: %s\n", a.Act)
	}
	svc := func(role string, sv model.ServiceView, rsName string) {
		if sv.Name == "" {
			return
		}
		line := fmt.Sprintf("  %-8s Service %s", role, sv.Name)
		switch {
		case sv.Unread:
			txt := " — not read, so its selector is not known"
			if rsName != "" {
				txt = fmt.Sprintf(" — not read; the controller last pointed it at %s (status.blueGreen)", rsName)
			}
			line += s.Warn.Render(txt)
		case !sv.Found:
			line += s.Crit.Render(" — not found")
		case !sv.HasHash:
			line += s.Crit.Render(" → every ReplicaSet (no rollouts-pod-template-hash in its selector)")
		case rsName == "":
			line += s.Crit.Render(" → hash " + sv.Hash + ", which no ReplicaSet has")
		default:
			var r *model.RS
			for _, x := range in.All {
				if x.Name == rsName {
					r = x
				}
			}
			txt := fmt.Sprintf(" → %s  %d/%d available", rsName, r.Available, r.Spec)
			if sv.SlicesRead {
				txt += fmt.Sprintf(", %d ready endpoints", sv.Ready)
				if sv.NotReady > 0 {
					txt += fmt.Sprintf(" (%d not ready)", sv.NotReady)
				}
			}
			if (sv.SlicesRead && sv.Ready == 0) || r.Available == 0 {
				line += s.Crit.Render(txt)
			} else {
				line += s.OK.Render(txt)
			}
		}
		b.WriteString(line + "\n")
	}
	svc("active", a.Active, a.ActiveRS)
	svc("preview", a.Preview, a.PreviewRS)
	if a.Sizing != "" {
		fmt.Fprintf(b, "  sizing: %s\n", a.Sizing)
	}
	for _, o := range a.Old {
		what := "old"
		if o.Aborted {
			what = "aborted"
		}
		left := o.Left.Round(1e9).String()
		if o.Left <= 0 {
			left = "passed"
		}
		fmt.Fprintf(b, "  scale-down: %s %s keeps %d pods until %s (%s left)", what, o.Name, o.Pods, o.Deadline, left)
		if o.Meaning != "" {
			fmt.Fprintf(b, ": %s", o.Meaning)
		}
		b.WriteString("\n")
	}
	if len(a.Forecast) == 0 {
		b.WriteString("  next pass: nothing changes\n")
	}
	for _, e := range a.Forecast {
		fmt.Fprintf(b, "  %s: %s\n", e.When, e.What)
	}
	if a.Waits != "" {
		fmt.Fprintf(b, "  then: %s\n", a.Waits)
	}
	for _, n := range a.Notes {
		fmt.Fprintf(b, "  %s %s\n", s.Warn.Render("note:"), n)
	}
}
