package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/fleet"
)

// topFindingWidth keeps a scan row on one line of a wide terminal.
const topFindingWidth = 90

// Scan writes a fleet scan as a table, one row per Rollout, riskiest first.
func Scan(w io.Writer, rep *fleet.Report, s Styles) error {
	fmt.Fprintf(w, "%s %s: %d Rollout(s), %d API request(s)\n\n", s.Title.Render("rolloutdoctor scan"), rep.Scope, rep.Rollouts, rep.Requests)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tROLLOUT\tWORST\tPHASE\tSTEP\tWEIGHT vs CANARY\tCONTROLLER\tTOP FINDING")
	for _, r := range rep.Rows {
		worst := "-"
		if r.Worst != "" {
			worst = strings.ToUpper(r.Worst)
		}
		weight := "-"
		if r.Weight != nil {
			weight = fmt.Sprintf("%d%% on %d/%d (needs %d)", *r.Weight, r.CanaryAvail, r.Replicas, r.Needed)
		}
		phase := r.Phase
		if r.Aborted {
			phase += " (aborted)"
		}
		top := Truncate(r.Top, topFindingWidth, "...")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Namespace, r.Name, worst, phase, r.Step, weight, r.Controller, top)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, g := range rep.Gaps {
		fmt.Fprintf(w, "%s could not read %s\n", s.Warn.Render("gap:"), g.String())
	}
	return nil
}
