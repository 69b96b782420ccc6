package diagnose

import (
	"fmt"
	"strings"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// checkControllerDown (RD166): every controller Deployment that reconciles
// the Rollout has no available pod. Then no pass runs: nothing the report
// predicts happens, and no way out takes effect, until one does.
func checkControllerDown(c *Context, r *rules.Rule) []rules.Finding {
	ds := c.View.Controllers
	if !snapshot.NoneRunning(ds) {
		return nil // one runs, none was found (RD109 says so), or their status is not known
	}
	var names, counts []string
	var evs []rules.Evidence
	for _, d := range ds {
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		obj := "Deployment " + d.Namespace + "/" + d.Name
		names = append(names, d.Namespace+"/"+d.Name)
		state := fmt.Sprintf("0 of %d available", want)
		if want == 0 {
			state = "scaled to 0"
		}
		counts = append(counts, state)
		evs = append(evs, ev(obj, "status.availableReplicas", fmt.Sprintf("0 (spec.replicas %d)", want)))
	}
	f := r.NewFinding(fmt.Sprintf("the controller that reconciles this Rollout is not running: Deployment %s has no available pod (%s); no pass runs, so nothing this report predicts happens and no escape takes effect until it does",
		strings.Join(names, ", "), strings.Join(counts, ", ")))
	f.Evidence = evs
	if st := c.ro.Status; st.StableRS != "" && st.StableRS == st.CurrentPodHash && !st.Abort && st.Phase == "Healthy" {
		// Fully promoted and healthy: nothing waits on a pass now, but the
		// next update will not roll out.
		f.Severity = rules.Warning
		f.Message += "; this Rollout is healthy and fully promoted, but its next update will not roll out"
	}
	return []rules.Finding{f}
}
