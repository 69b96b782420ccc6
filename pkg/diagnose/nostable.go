package diagnose

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// initialDeploy matches the controller's RolloutCompleted message for a
// revision it promoted because it had no stable ReplicaSet.
var initialDeploy = regexp.MustCompile(`^Rollout completed update to revision (\d+) \(([a-z0-9]+)\): Initial deploy$`)

// checkStableMissing (RD169): the controller finds the stable ReplicaSet
// only by the hash status.stableRS records. When that ReplicaSet is gone —
// deleted by someone cleaning up, or with its pods in an attempt to restart
// them — the controller has no stable, and its first check promotes the
// current revision at once as an "Initial deploy": no step, analysis or
// availability gate stands in the way, and the canary is sized to every
// replica. Critical while that is the next pass; a warning afterwards,
// while the controller's event says a later revision was promoted so.
func checkStableMissing(c *Context, r *rules.Rule) []rules.Finding {
	in := c.Analysis.Inputs
	_, unread := c.View.ReplicaSetsUnread()
	if !unread && in.StableHash != "" && in.Stable == nil && in.New != nil && in.New.Hash != in.StableHash {
		skipped := fmt.Sprintf("the remaining steps and analysis are skipped, and it is sized to all %d replicas", in.Replicas)
		if in.BG != nil {
			skipped = "the pause before promotion and the pre-promotion analysis are skipped"
		}
		msg := fmt.Sprintf("status.stableRS names pod-template-hash %s, but no ReplicaSet of the Rollout carries it (deleted?): on its next pass the controller has no stable and promotes %s (revision %s, %d/%d available) at once as an \"Initial deploy\" — %s", in.StableHash, in.New.Name, in.New.Revision, in.New.Available, in.Replicas, skipped)
		f := r.NewFinding(msg)
		f.Evidence = []rules.Evidence{ev(c.obj(), "status.stableRS", in.StableHash), ev("ReplicaSets of "+c.obj(), "pod-template-hash "+in.StableHash, "none")}
		f.Cites = c.cites("uc.stable-rs-by-hash", "sy.initial-deploy-no-stable")
		return []rules.Finding{f}
	}
	// Afterwards: the latest event of a revision after the first promoted
	// as an initial deploy.
	for i := len(c.View.Events) - 1; i >= 0; i-- {
		e := c.View.Events[i]
		m := initialDeploy.FindStringSubmatch(e.Message)
		if e.Reason != "RolloutCompleted" || m == nil {
			continue
		}
		if rev, _ := strconv.Atoi(m[1]); rev <= 1 {
			return nil // the first revision is an initial deploy; later ones are not
		}
		msg := fmt.Sprintf("revision %s (%s) was promoted at %s as an \"Initial deploy\", without its remaining steps, analysis or availability gate: the controller had no stable ReplicaSet then (the one status.stableRS named had been deleted, or the status had none: the Rollout re-created, or its status reset)", m[1], m[2], c.ago(snapshot.EventTime(e)))
		if in.BG != nil {
			msg += "; for blue-green also when the active Service's selector lacked rollouts-pod-template-hash (RD114)"
		}
		f := r.NewFinding(msg)
		f.Severity = rules.Warning
		f.Evidence = []rules.Evidence{ev("Event "+e.Name, "message", e.Message)}
		f.Cites = c.cites("uc.stable-rs-by-hash", "sy.initial-deploy-no-stable")
		return []rules.Finding{f}
	}
	return nil
}
