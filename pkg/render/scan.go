package render

import (
	"fmt"
	"io"
	"sort"
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
		fmt.Fprintln(tw, strings.Join(rowCells(r), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, g := range rep.Gaps {
		fmt.Fprintf(w, "%s could not read %s\n", s.Warn.Render("gap:"), g.String())
	}
	return nil
}

// MultiScan writes a scan over several clusters: a line per cluster (what
// was read, the controller versions and how they were found, the Rollouts
// by strategy and router, how many wait for a person, or why it could not
// be read), then one table of every Rollout, riskiest first, with the
// cluster as a column and the Rollouts waiting for a person called out.
func MultiScan(w io.Writer, rep *fleet.MultiReport, s Styles) error {
	fmt.Fprintf(w, "%s over %d cluster(s)\n\n", s.Title.Render("rolloutdoctor scan"), len(rep.Clusters))
	for _, c := range rep.Clusters {
		if c.Error != "" {
			fmt.Fprintf(w, "  %s  %s %s\n", s.Bold.Render(c.Context), s.Crit.Render("NOT READ"), c.Error)
			continue
		}
		if c.NotReadAgain {
			fmt.Fprintf(w, "  %s  same cluster, credentials and namespaces as %s: not read again\n", s.Bold.Render(c.Context), c.SameAs)
			continue
		}
		if c.NotInstalled {
			fmt.Fprintf(w, "  %s  no Argo Rollouts: the cluster does not serve rollouts.argoproj.io (its CRDs are not installed)\n", s.Bold.Render(c.Context))
			continue
		}
		var vers []string
		for _, v := range c.Controllers {
			how := v.Source
			if v.From != "" {
				how += " " + v.From
			}
			ver := fmt.Sprintf("%s (%s; %d)", v.Version, how, v.Rollouts)
			if v.NotRunning {
				ver += " " + s.Crit.Render("NOT RUNNING (RD166)")
			}
			vers = append(vers, ver)
		}
		line := fmt.Sprintf("  %s  %d Rollout(s) in %.1fs, %d request(s)", s.Bold.Render(c.Context), c.Rollouts, c.Seconds, c.Requests)
		if len(vers) > 0 {
			line += "; controller " + strings.Join(vers, ", ")
		}
		if len(c.ByStrategy) > 0 {
			line += "; " + counts(c.ByStrategy) + "; router " + counts(c.ByRouter)
		}
		if c.Waiting > 0 {
			line += "; " + s.Warn.Render(fmt.Sprintf("%d waiting for a person", c.Waiting))
		}
		switch {
		case c.ListedElsewhere == 0:
		case c.ListedElsewhere == c.Rollouts:
			line += fmt.Sprintf("; same cluster as %s: its Rollouts are listed there", c.SameAs)
		default:
			line += fmt.Sprintf("; same cluster as %s: %d of its Rollouts are listed there", c.SameAs, c.ListedElsewhere)
		}
		fmt.Fprintln(w, line)
		for _, g := range c.Gaps {
			fmt.Fprintf(w, "    %s could not read %s\n", s.Warn.Render("gap:"), g.String())
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tNAMESPACE\tROLLOUT\tWORST\tPHASE\tSTEP\tWEIGHT vs CANARY\tCONTROLLER\tTOP FINDING")
	for _, r := range rep.Rows {
		fmt.Fprintln(tw, r.Cluster+"\t"+strings.Join(rowCells(r), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var waiting []string
	for _, r := range rep.Rows {
		if r.Waiting != "" {
			waiting = append(waiting, fmt.Sprintf("  %s %s/%s — %s", r.Cluster, r.Namespace, r.Name, r.Waiting))
		}
	}
	if len(waiting) > 0 {
		fmt.Fprintf(w, "\n%s\n%s\n", s.Title.Render("Waiting for a person"), strings.Join(waiting, "\n"))
	}
	return nil
}

// counts writes a tally as "canary 12, blueGreen 3", largest first.
func counts(m map[string]int) string {
	type kv struct {
		k string
		n int
	}
	var kvs []kv
	for k, n := range m {
		kvs = append(kvs, kv{k, n})
	}
	sort.Slice(kvs, func(i, j int) bool {
		if kvs[i].n != kvs[j].n {
			return kvs[i].n > kvs[j].n
		}
		return kvs[i].k < kvs[j].k
	})
	parts := make([]string, len(kvs))
	for i, x := range kvs {
		parts[i] = fmt.Sprintf("%s %d", x.k, x.n)
	}
	return strings.Join(parts, ", ")
}

// rowCells are a scan row's cells from NAMESPACE to TOP FINDING; a Rollout
// without findings that waits for a person says so in the last.
func rowCells(r fleet.Row) []string {
	worst := "-"
	if r.Worst != "" {
		worst = strings.ToUpper(r.Worst)
	}
	weight := "-"
	if p := r.PodShare; p != nil && !r.ReplicaSetsUnread {
		weight = fmt.Sprintf("pods %d/%d (%d%%)", p.CanaryReady, p.CanaryReady+p.OtherReady, p.Percent)
	}
	if r.Weight != nil {
		weight = fmt.Sprintf("%d%% on %d/%d (needs %d)", *r.Weight, r.CanaryAvail, r.Replicas, r.Needed)
		if r.ReplicaSetsUnread {
			weight = fmt.Sprintf("%d%% on ?/%d (needs %d)", *r.Weight, r.Replicas, r.Needed)
		}
	}
	phase := r.Phase
	if r.Aborted {
		phase += " (aborted)"
	}
	top := Truncate(r.Top, topFindingWidth, "...")
	if top == "" && r.Waiting != "" {
		top = "waiting for a person: " + r.Waiting
	}
	ctrl := r.Controller
	if r.ControllerAssumed {
		ctrl += " (assumed)"
	}
	return []string{r.Namespace, r.Name, worst, phase, r.Step, weight, ctrl, top}
}
