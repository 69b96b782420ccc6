package diagnose

import (
	"fmt"
	"strings"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
)

// checkBasicStall (RD167): a canary without trafficRouting that the
// controller cannot scale while the canary has pods that are not
// available. Critical once aborted: the abort cannot finish, and the
// pods the abort meant to drain keep taking requests.
func checkBasicStall(c *Context, r *rules.Rule) []rules.Finding {
	in := c.Analysis.Inputs
	st, ok := model.BasicStall(in, c.Analysis.Next)
	if !ok || in.New.Available >= in.New.Spec {
		return nil
	}
	// The canary's pods that are not available: a pod of them becoming
	// available is what frees room.
	wait := fmt.Sprintf("a pod of the canary %s turns Ready (%d of %d available)", in.New.Name, in.New.Available, in.New.Spec)
	var older []string
	var olderReady, allReady int32
	for _, x := range in.All {
		allReady += x.Ready
		if x.Name == in.New.Name || x.Name == in.Stable.Name || x.Spec == 0 {
			continue
		}
		olderReady += x.Ready
		older = append(older, fmt.Sprintf("%s (rev %s, %d ready)", x.Name, x.Revision, x.Ready))
	}
	room := fmt.Sprintf("%d pods exist (replicas %d + maxSurge %d) and %d are available (replicas %d − maxUnavailable %d)",
		st.Pods, in.Replicas, in.MaxSurge, st.Available, in.Replicas, in.MaxUnavailable)
	msg := fmt.Sprintf("nothing scales until %s: %s", wait, room)
	if in.Abort {
		msg = fmt.Sprintf("the abort cannot finish until %s: %s, so the stable cannot grow back to %d nor the canary go to 0", wait, room, in.Replicas)
	}
	if len(older) > 0 {
		msg += fmt.Sprintf("; the older revision %s keeps taking requests", strings.Join(older, ", "))
		if allReady > 0 {
			msg += fmt.Sprintf(" (%d%% of the ready pods)", int64(olderReady)*100/int64(allReady))
		}
	}
	f := r.NewFinding(msg)
	if in.Abort {
		f.Severity = rules.Critical
	}
	f.Evidence = []rules.Evidence{ev("ReplicaSet "+c.ro.Namespace+"/"+in.New.Name, "status.availableReplicas", fmt.Sprintf("%d (spec.replicas %d)", in.New.Available, in.New.Spec))}
	f.Cites = c.cites("bc.older-first", "bc.others-min-available", "bc.others-down")
	return []rules.Finding{f}
}
