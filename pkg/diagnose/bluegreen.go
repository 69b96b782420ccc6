package diagnose

import (
	"fmt"
	"strings"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
)

// The blue-green checks, RD114–RD118 (live) and RD209 (static): they read
// the blue-green model (model.BlueGreenAnalysis) and the Services as they
// stand — their selectors and EndpointSlices, not only what the Rollout's
// status records.

func (c *Context) bg() *model.BlueGreenAnalysis { return c.Analysis.BlueGreen }

// rsByHash finds a ReplicaSet of the Rollout by its pod-template-hash.
func (c *Context) rsByHash(h string) *model.RS {
	for _, r := range c.Analysis.Inputs.All {
		if h != "" && r.Hash == h {
			return r
		}
	}
	return nil
}

func (c *Context) svcObj(name string) string { return "Service " + c.ro.Namespace + "/" + name }

// checkActiveBlackout: the active Service sends traffic nowhere, or
// anywhere (no hash), or to a ReplicaSet with no ready endpoint.
func checkActiveBlackout(c *Context, r *rules.Rule) []rules.Finding {
	a := c.bg()
	if a == nil || a.Active.Name == "" || a.Active.Unread {
		return nil // not read: nothing is known of its selector or its existence
	}
	sv := a.Active
	in := c.Analysis.Inputs
	var f rules.Finding
	switch {
	case !sv.Found:
		f = r.NewFinding(fmt.Sprintf("the active Service %s does not exist: the controller rejects the Rollout (InvalidSpec) and reconciles nothing until it is back", sv.Name))
		f.Evidence = []rules.Evidence{ev(c.obj(), "spec.strategy.blueGreen.activeService", sv.Name)}
		return []rules.Finding{f}
	case !sv.HasHash:
		msg := fmt.Sprintf("the active Service %s has no %s in its selector: it sends traffic to the pods of every ReplicaSet, the controller treats the update as fast-tracked (no pause, no pre-promotion analysis) and marks the current revision stable at once", sv.Name, "rollouts-pod-template-hash")
		if in.New != nil && in.Stable != nil && in.New.Name != in.Stable.Name {
			msg += fmt.Sprintf("; the old ReplicaSet %s is then scaled down after scaleDownDelaySeconds while %s has %d/%d available — a blackout if it never becomes available", in.Stable.Name, in.New.Name, in.New.Available, in.Replicas)
		}
		f = r.NewFinding(msg)
		f.Evidence = []rules.Evidence{ev(c.svcObj(sv.Name), "spec.selector[rollouts-pod-template-hash]", "absent")}
		if in.BG.StatusActive != "" {
			f.Evidence = append(f.Evidence, ev(c.obj(), "status.blueGreen.activeSelector", in.BG.StatusActive))
		}
		f.Cites = c.cites("bg.fast-track-no-hash", "bg.pre-analysis-skip", "bg.promote-no-hash-initial", "bg.scale-down-deadline-add")
	default:
		rs := c.rsByHash(sv.Hash)
		switch {
		case rs == nil:
			f = r.NewFinding(fmt.Sprintf("the active Service %s selects rollouts-pod-template-hash %s, which no ReplicaSet of the Rollout has: it has no endpoint of this Rollout", sv.Name, sv.Hash))
			f.Evidence = []rules.Evidence{ev(c.svcObj(sv.Name), "spec.selector[rollouts-pod-template-hash]", sv.Hash)}
		case sv.SlicesRead && sv.Ready == 0 && in.Replicas == 0:
			f = r.NewFinding(fmt.Sprintf("the active Service %s selects %s, which has no ready endpoint: %s", sv.Name, rs.Name, scaledToZero))
			f.Severity = rules.Warning
			f.Remediation = "Scale the Rollout up (`kubectl scale rollout NAME --replicas N`, or the autoscaler that owns spec.replicas) if traffic should be served."
			f.Evidence = []rules.Evidence{ev(c.obj(), "spec.replicas", 0), ev("EndpointSlices of "+sv.Name, "ready endpoints", 0)}
			return []rules.Finding{f}
		case sv.SlicesRead && sv.Ready == 0:
			f = r.NewFinding(fmt.Sprintf("the active Service %s selects %s, which has no ready endpoint (%d/%d available): the production traffic behind it has nowhere to go", sv.Name, rs.Name, rs.Available, rs.Spec))
			f.Evidence = []rules.Evidence{ev(c.svcObj(sv.Name), "spec.selector[rollouts-pod-template-hash]", sv.Hash), ev("EndpointSlices of "+sv.Name, "ready endpoints", 0), ev("ReplicaSet "+rs.Name, "status.availableReplicas", rs.Available)}
		case !sv.SlicesRead && rs.Available == 0:
			f = r.NewFinding(fmt.Sprintf("the active Service %s selects %s, which has no available pod", sv.Name, rs.Name))
			f.Evidence = []rules.Evidence{ev(c.svcObj(sv.Name), "spec.selector[rollouts-pod-template-hash]", sv.Hash), ev("ReplicaSet "+rs.Name, "status.availableReplicas", 0)}
		default:
			return nil
		}
		f.Cites = c.cites("bg.active-gate", "bg.active-abort-to-stable")
	}
	return []rules.Finding{f}
}

// checkPreviewNotReady: the preview Service selects a ReplicaSet that does
// not yet have the pods it should.
func checkPreviewNotReady(c *Context, r *rules.Rule) []rules.Finding {
	a := c.bg()
	in := c.Analysis.Inputs
	if a == nil || !a.Preview.Found || !a.Preview.HasHash || in.New == nil || in.Abort {
		return nil
	}
	rs := c.rsByHash(a.Preview.Hash)
	if rs == nil || in.StableHash == rs.Hash {
		return nil
	}
	want := a.NewTarget
	if rs.Name != in.New.Name {
		want = rs.Spec
	}
	ready := rs.Available
	if a.Preview.SlicesRead {
		ready = a.Preview.Ready
	}
	if want == 0 || ready >= want {
		return nil
	}
	f := r.NewFinding(fmt.Sprintf("the preview Service %s selects %s with %d of the %d pods it is sized to ready: whatever tests or warms the new revision through the preview now reaches a partial backend — the controller points the preview at the new ReplicaSet before it has any pod", a.Preview.Name, rs.Name, ready, want))
	f.Evidence = []rules.Evidence{ev(c.svcObj(a.Preview.Name), "spec.selector[rollouts-pod-template-hash]", a.Preview.Hash), ev("ReplicaSet "+rs.Name, "status.availableReplicas", fmt.Sprintf("%d of %d", rs.Available, want))}
	if a.Preview.SlicesRead {
		f.Evidence = append(f.Evidence, ev("EndpointSlices of "+a.Preview.Name, "ready endpoints", a.Preview.Ready))
	}
	f.Cites = c.cites("bg.preview-switch")
	return []rules.Finding{f}
}

// checkCapacityCliff: the forecast switch puts the active Service on fewer
// pods than it has now.
func checkCapacityCliff(c *Context, r *rules.Rule) []rules.Finding {
	a := c.bg()
	in := c.Analysis.Inputs
	if a == nil || in.New == nil {
		return nil
	}
	now := int32(0)
	what := ""
	switch {
	case !a.Active.Found:
		return nil
	case a.Active.SlicesRead:
		now, what = a.Active.Ready, "ready endpoints"
	case !a.Active.HasHash:
		for _, x := range in.All {
			now += x.Available
		}
		what = "available pods across every ReplicaSet"
	default:
		if rs := c.rsByHash(a.Active.Hash); rs != nil {
			now, what = rs.Available, "available pods"
		}
	}
	steps := a.Steps
	if a.State == model.BGPaused || a.State == model.BGManualPause {
		// Paused for a person: the promotion is what they are about to do.
		p := in.Clone()
		p.BG.PauseStart, p.BG.SpecPaused = nil, false
		steps = model.SimulateBG(p, 400)
	}
	var sw *model.BGStep
	for i := range steps {
		if steps[i].Pass.Switched {
			sw = &steps[i]
			break
		}
	}
	if sw == nil {
		return nil
	}
	after := in.Replicas // the gate switches at a saturated new ReplicaSet
	if after >= now {
		return nil
	}
	f := r.NewFinding(fmt.Sprintf("promotion switches the active Service %s from %d %s to %s's %d pods: the controller switches once the new ReplicaSet has spec.replicas (%d) available, not the capacity the active Service has now", a.Active.Name, now, what, in.New.Name, after, in.Replicas))
	f.Evidence = []rules.Evidence{ev(c.svcObj(a.Active.Name), what, now), ev(c.obj(), "spec.replicas", in.Replicas)}
	if p := in.BG.PreviewReplicaCount; p != nil {
		f.Evidence = append(f.Evidence, ev(c.obj(), "spec.strategy.blueGreen.previewReplicaCount", *p))
	}
	f.Cites = c.cites("bg.active-gate", "bg.saturated", "bg.stable-full", "bg.preview-count-promote-full")
	return []rules.Finding{f}
}

// checkCheckpointLeak: a new revision inherited scaleUpPreviewCheckPoint.
func checkCheckpointLeak(c *Context, r *rules.Rule) []rules.Finding {
	a := c.bg()
	if a == nil || a.State != model.BGStuckCheckpoint {
		return nil
	}
	in := c.Analysis.Inputs
	f := r.NewFinding(a.StateWhy + "; the Rollout stays at 'active service cutover pending' until its progress deadline")
	f.Evidence = []rules.Evidence{
		ev(c.obj(), "status.blueGreen.scaleUpPreviewCheckPoint", true),
		ev(c.obj(), "spec.strategy.blueGreen.previewReplicaCount", *in.BG.PreviewReplicaCount),
		ev("ReplicaSet "+in.New.Name, "spec.replicas", in.New.Spec),
		ev(c.obj(), "status.blueGreen.prePromotionAnalysisRunStatus", "absent"),
	}
	f.Cites = c.cites("bg.checkpoint-leak", "bg.checkpoint-full-size", "bg.pre-analysis-needs-preview")
	return []rules.Finding{f}
}

// checkAbortHeld: aborted after the switch, and the active Service stays on
// the aborted ReplicaSet.
func checkAbortHeld(c *Context, r *rules.Rule) []rules.Finding {
	a := c.bg()
	in := c.Analysis.Inputs
	if a == nil || !in.Abort || in.New == nil || !a.Active.HasHash || a.Active.Hash != in.New.Hash || in.New.Hash == in.StableHash {
		return nil
	}
	held := false
	for _, s := range a.Steps {
		if s.Pass.Reverted {
			break
		}
		if s.Pass.HeldBack {
			held = true
			break
		}
	}
	if !held {
		return nil
	}
	msg := fmt.Sprintf("aborted after the switch: the active Service still selects the aborted %s (%d/%d available) and the controller moves it back to %s only when %s is fully available again", in.New.Name, in.New.Available, in.Replicas, stableOf(in), in.New.Name)
	for _, e := range a.Forecast {
		if strings.HasPrefix(e.What, in.New.Name+" is scaled from") {
			msg += "; " + e.When + " " + e.What + " while the active Service still selects it: an outage"
			break
		}
	}
	f := r.NewFinding(msg)
	f.Evidence = []rules.Evidence{ev(c.obj(), "status.abort", true), ev(c.svcObj(a.Active.Name), "spec.selector[rollouts-pod-template-hash]", a.Active.Hash), ev("ReplicaSet "+in.New.Name, "status.availableReplicas", in.New.Available)}
	f.Cites = c.cites("bg.active-gate", "bg.active-abort-to-stable", "rs.abort-delay-needs-stable-full")
	return []rules.Finding{f}
}

func stableOf(in model.Inputs) string {
	if in.Stable == nil {
		return "the stable"
	}
	return "the stable " + in.Stable.Name
}

// checkScaleDownDelayZero: scaleDownDelaySeconds 0 keeps old ReplicaSets.
func checkScaleDownDelayZero(c *Context, r *rules.Rule) []rules.Finding {
	bg := c.ro.Spec.Strategy.BlueGreen
	if bg == nil || bg.ScaleDownDelaySeconds == nil || *bg.ScaleDownDelaySeconds != 0 {
		return nil
	}
	f := r.NewFinding("scaleDownDelaySeconds: 0 writes no scale-down deadline: after each promotion the previous ReplicaSet keeps all its pods, selected by no Service, and is never scaled down (within scaleDownDelayRevisionLimit)")
	f.Evidence = []rules.Evidence{ev(c.obj(), "spec.strategy.blueGreen.scaleDownDelaySeconds", 0)}
	f.Cites = c.cites("bg.scale-down-delay-zero", "bg.scale-down-keep", "bg.scale-down-revision-limit")
	return []rules.Finding{f}
}

// checkScaleDownDelayShort: RD210, a scale-down delay set below the 30 s
// default, which upstream documents as the time a selector change needs to
// reach every node.
func checkScaleDownDelayShort(c *Context, r *rules.Rule) []rules.Finding {
	bg := c.ro.Spec.Strategy.BlueGreen
	if bg == nil || bg.ScaleDownDelaySeconds == nil || *bg.ScaleDownDelaySeconds <= 0 || *bg.ScaleDownDelaySeconds >= 30 {
		return nil
	}
	d := *bg.ScaleDownDelaySeconds
	f := r.NewFinding(fmt.Sprintf("scaleDownDelaySeconds: %d: the previous ReplicaSet is scaled down %d s after the active Service switches, before the selector change can have reached every node (the default is 30 s): its pods are terminated while some nodes still send them connections", d, d))
	f.Evidence = []rules.Evidence{ev(c.obj(), "spec.strategy.blueGreen.scaleDownDelaySeconds", d)}
	f.Cites = c.cites("bg.scale-down-delay-default")
	return []rules.Finding{f}
}

// scaledToZero ends a finding about a Service without ready endpoints when
// the Rollout is scaled to 0: on purpose (KEDA, an idle environment) or by
// mistake, the cause is plain and it is no rollout's doing, so such
// findings are warnings.
const scaledToZero = "the Rollout is scaled to 0 (spec.replicas 0), so every request fails until it is scaled up; expected only if that is on purpose"
