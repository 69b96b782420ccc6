package escape

import (
	"fmt"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// GitOps describes the tool that owns the Rollout's spec, and what that
// means for the escapes.
type GitOps struct {
	Tool string `json:"tool"` // "Argo CD" or "Flux"
	// Owner names the Application or Kustomization/HelmRelease, as far as
	// the object tells.
	Owner string `json:"owner,omitempty"`
	// Evidence is the annotation or label that gave it away.
	Evidence string `json:"evidence"`
	// Read is true when the owner object itself was read (its sync
	// settings below are then known, not assumed).
	Read bool `json:"read"`
	// UndoReverted predicts whether the tool puts Git's template back after
	// an undo: Argo CD with selfHeal (unless spec.template is ignored), Flux
	// unless suspended. Unknown settings are taken as reverting.
	UndoReverted bool `json:"undoReverted"`
	// StopFight is the change to the tool that makes it leave the Rollout's
	// template alone, when it would revert an undo.
	StopFight string   `json:"stopFight,omitempty"`
	Notes     []string `json:"notes"`
}

// detectGitOps reads the GitOps tool the Rollout's marks name (Argo CD's
// tracking-id annotation or legacy instance label, Flux's toolkit labels)
// and, when the snapshot holds it, its Application, Kustomization or
// HelmRelease: whether it syncs by itself and heals drift.
func detectGitOps(v *snapshot.View) *GitOps {
	o := v.GitOps
	if o == nil {
		return nil
	}
	ro := v.Rollout
	g := &GitOps{Tool: o.Mark.Tool, Owner: o.Mark.Owner(), Evidence: o.Mark.Evidence}
	read := o.AutoSync || o.SyncStatus != "" || len(o.Ignore) > 0 || o.Interval != ""
	g.Read = read
	switch {
	case !read:
		g.UndoReverted = true // unknown: assume the common setup
	case o.Mark.Tool == "Flux":
		g.UndoReverted = o.AutoSync
	default:
		g.UndoReverted = o.SelfHeal && !o.Ignores(ro.Name, ro.Namespace, "/spec/template")
	}
	if g.UndoReverted {
		if o.Mark.Tool == "Flux" {
			g.StopFight = diagnose.FluxFix(o.Mark)
		} else {
			g.StopFight = diagnose.IgnoreDifferencesFix(ro.Name, ro.Namespace, []string{"template"})
		}
	}
	sync := "self-heal"
	if g.Tool == "Flux" {
		sync = "the next reconciliation"
	}
	undo := fmt.Sprintf("undo rewrites spec.template; %s puts Git's template back (and restarts the rollout you escaped) unless Git changes too: revert the change in Git, or first %s", sync, g.StopFight)
	if !g.UndoReverted {
		undo = "undo rewrites spec.template; " + o.Mark.Owner() + " does not revert it by itself (no self-heal, suspended, or template ignored), but the next sync of a Git change may: revert the change in Git too"
	}
	if !read {
		undo += " (the owner object could not be read: its settings are assumed)"
	}
	g.Notes = []string{
		undo,
		"abort, retry, promote and skip patch only status, which Git does not declare: " + g.Tool + " leaves them alone",
		"promote --full on v1.9+ also sets spec.paused=false, a spec change " + g.Tool + " may report as drift",
		"what to commit instead of undo: the image/template of the revision you want to run (the target revision's), so Git and the cluster agree",
	}
	return g
}
