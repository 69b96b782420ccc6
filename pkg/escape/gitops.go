package escape

import (
	"fmt"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GitOps describes the tool that owns the Rollout's spec, and what that
// means for the escapes.
type GitOps struct {
	Tool string `json:"tool"` // "Argo CD" or "Flux"
	// Owner names the Application or Kustomization/HelmRelease, as far as
	// the object tells.
	Owner string `json:"owner,omitempty"`
	// Evidence is the annotation or label that gave it away.
	Evidence string   `json:"evidence"`
	Notes    []string `json:"notes"`
}

// detectGitOps looks for the marks Argo CD and Flux leave on the objects they
// apply: Argo CD's tracking-id annotation or its legacy instance label, and
// Flux's kustomize/helm toolkit labels.
func detectGitOps(ro *v1alpha1.Rollout, ref *appsv1.Deployment) *GitOps {
	metas := []metav1.ObjectMeta{ro.ObjectMeta}
	if ref != nil {
		metas = append(metas, ref.ObjectMeta)
	}
	var g *GitOps
	for _, m := range metas {
		if id := m.Annotations["argocd.argoproj.io/tracking-id"]; id != "" {
			g = &GitOps{Tool: "Argo CD", Owner: strings.SplitN(id, ":", 2)[0], Evidence: "annotation argocd.argoproj.io/tracking-id=" + id}
			break
		}
		if n := m.Labels["kustomize.toolkit.fluxcd.io/name"]; n != "" {
			g = &GitOps{Tool: "Flux", Owner: "Kustomization " + m.Labels["kustomize.toolkit.fluxcd.io/namespace"] + "/" + n, Evidence: "label kustomize.toolkit.fluxcd.io/name=" + n}
			break
		}
		if n := m.Labels["helm.toolkit.fluxcd.io/name"]; n != "" {
			g = &GitOps{Tool: "Flux", Owner: "HelmRelease " + m.Labels["helm.toolkit.fluxcd.io/namespace"] + "/" + n, Evidence: "label helm.toolkit.fluxcd.io/name=" + n}
			break
		}
		// Argo CD's default (legacy) tracking method labels the object with
		// the Application name; Helm sets the same label, so it is only a hint
		// when Helm does not claim the object too.
		if n := m.Labels["app.kubernetes.io/instance"]; n != "" && m.Labels["app.kubernetes.io/managed-by"] != "Helm" {
			g = &GitOps{Tool: "Argo CD", Owner: n, Evidence: "label app.kubernetes.io/instance=" + n + " (Argo CD label tracking, or another tool using the same label)"}
		}
	}
	if g == nil {
		return nil
	}
	sync := "self-heal"
	if g.Tool == "Flux" {
		sync = "the next reconciliation"
	}
	g.Notes = []string{
		fmt.Sprintf("undo rewrites spec.template; %s puts Git's template back (and restarts the rollout you escaped) unless Git changes too: revert the change in Git, or pause auto-sync first", sync),
		"abort, retry, promote and skip patch only status, which Git does not declare: " + g.Tool + " leaves them alone",
		"promote --full on v1.9+ also sets spec.paused=false, a spec change " + g.Tool + " may report as drift",
		"what to commit: the image/template of the revision you want to run (for undo, the target revision's), so Git and the cluster agree",
	}
	return g
}
