package escape

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/router"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/upstream"
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
	StopFight string `json:"stopFight,omitempty"`
	// RouterFought lists the router objects whose weights the GitOps tool
	// wrote last (managedFields): promote and abort change the weight the
	// controller writes there, and the sync puts Git's back, so those are
	// fought too. RouterFix is the change that stops it.
	RouterFought []string `json:"routerFought,omitempty"`
	RouterFix    string   `json:"routerFix,omitempty"`
	Notes        []string `json:"notes"`
}

// routerFight finds the router objects whose weights a GitOps tool puts
// back after the controller writes them: the last writer of the weights is
// Argo CD's or Flux's manager (managedFields), or the object carries the
// tool's mark and the owner, when read, heals drift and does not ignore the
// weights (a single read taken after the controller wrote its weight back
// no longer shows the tool's write). It returns the objects, the tool's
// manager or owner, and what stops it.
func routerFight(v *snapshot.View, ver upstream.Version) (objs []string, who, fix string) {
	if v.Workload == nil || v.Workload.Router == nil {
		return nil, "", ""
	}
	st := router.Read(v.Rollout, v.Workload.Router, ver, router.FlagsOf(v.Controllers))
	if st == nil {
		return nil, "", ""
	}
	marks := map[string]*snapshot.GitOpsMark{}
	for _, u := range v.Workload.Router.Objects {
		m := snapshot.MarkOf(metav1.ObjectMeta{Labels: u.GetLabels(), Annotations: u.GetAnnotations()})
		if m != nil && !m.Weak {
			marks[u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName()] = m
		}
	}
	flux := ""
	if g := v.GitOps; g != nil && g.Mark.Tool == "Flux" {
		flux = "flux suspend " + strings.ToLower(g.Mark.Kind) + " " + g.Mark.Name
		if g.Mark.Namespace != "" {
			flux += " -n " + g.Mark.Namespace
		}
	}
	var fixes []string
	for _, o := range st.Objects {
		if o.Missing || o.NotOwned {
			continue
		}
		manager := ""
		if w := o.Writer; w != nil && !w.Controller && diagnose.GitOpsTool(w.Manager) != "" {
			manager, who = w.Manager, w.Manager
		} else if m := marks[o.Ref()]; m != nil && markedFights(v.GitOps, m, o) {
			manager = map[string]string{"Argo CD": "argocd-controller", "Flux": "kustomize-controller"}[m.Tool]
			who = m.Owner()
		} else {
			continue
		}
		what := o.Ref()
		if o.Canary != nil {
			what += fmt.Sprintf(" (canary %d", *o.Canary)
			if s := v.Rollout.Status.Canary.Weights; s != nil {
				what += fmt.Sprintf(" where the status says %d", s.Canary.Weight)
			}
			what += ")"
		}
		objs = append(objs, what)
		fixes = append(fixes, diagnose.RouterFix(o, manager, flux))
	}
	return objs, who, strings.Join(fixes, "; ")
}

// markedFights says whether the GitOps owner that marks router object o
// puts Git's weights back: unknown (not the Rollout's owner, or not read)
// counts as yes; read, it must sync by itself, heal drift (Flux always
// does while not suspended) and not ignore the weights.
func markedFights(owner *snapshot.GitOpsOwner, m *snapshot.GitOpsMark, o router.Object) bool {
	if owner == nil || owner.Mark.Kind != m.Kind || owner.Mark.Name != m.Name {
		return true
	}
	read := owner.AutoSync || owner.SyncStatus != "" || len(owner.Ignore) > 0 || owner.Interval != ""
	if !read {
		return true
	}
	group := o.APIVersion
	if i := strings.Index(group, "/"); i >= 0 {
		group = group[:i]
	}
	return owner.SelfHeal && !owner.IgnoresWeights(group, o.Kind, o.Name, o.Namespace)
}

// detectGitOps reads the GitOps tool the Rollout's marks name (Argo CD's
// tracking-id annotation or legacy instance label, Flux's toolkit labels)
// and, when the snapshot holds it, its Application, Kustomization or
// HelmRelease: whether it syncs by itself and heals drift.
func detectGitOps(v *snapshot.View, ver upstream.Version) *GitOps {
	o := v.GitOps
	fought, who, rfix := routerFight(v, ver)
	if o == nil && len(fought) > 0 {
		// The Rollout carries no mark, but a GitOps tool writes its router.
		tool := diagnose.GitOpsTool(who)
		if tool == "" {
			tool = "GitOps"
		}
		o = &snapshot.GitOpsOwner{Mark: &snapshot.GitOpsMark{Tool: tool, Kind: "field manager", Name: who, Evidence: "managedFields or marks of " + fought[0] + ": " + who}}
	}
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
	status := "abort, retry, promote and skip patch only status, which Git does not declare: " + g.Tool + " leaves them alone"
	if len(fought) > 0 {
		g.RouterFought, g.RouterFix = fought, rfix
		status = fmt.Sprintf("abort, retry, promote and skip patch only status, but promote and abort change the weight the controller writes to %s, whose weights %s puts back to Git's: the sync reverts every weight the controller writes, so promote and abort are fought too until it stops writing them: %s",
			strings.Join(fought, ", "), who, rfix)
	}
	g.Notes = []string{
		undo,
		status,
		"promote --full on v1.9+ also sets spec.paused=false, a spec change " + g.Tool + " may report as drift",
		"what to commit instead of undo: the image/template of the revision you want to run (the target revision's), so Git and the cluster agree",
	}
	return g
}
