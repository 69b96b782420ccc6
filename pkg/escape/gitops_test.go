package escape

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// TestGitOpsPredictsRevert: escape says whether an undo is reverted, from
// the Application when it was read, and prints the change that stops it.
func TestGitOpsPredictsRevert(t *testing.T) {
	mark := &snapshot.GitOpsMark{Tool: "Argo CD", Kind: "Application", Group: snapshot.GroupArgoCD, Namespace: "argocd", Name: "shop", Evidence: "annotation argocd.argoproj.io/tracking-id=shop:argoproj.io/Rollout:shop/checkout-api"}
	ignored := []snapshot.IgnoreRule{{Group: "argoproj.io", Kind: "Rollout", JSONPointers: []string{"/spec/template"}}}
	cases := []struct {
		name   string
		owner  *snapshot.GitOpsOwner
		revert bool
		says   string
	}{
		{"no mark", nil, false, ""},
		{"selfHeal", &snapshot.GitOpsOwner{Mark: mark, AutoSync: true, SelfHeal: true, SyncStatus: "Synced"}, true,
			"spec.ignoreDifferences: [{group: argoproj.io, kind: Rollout, name: checkout-api, namespace: shop, jsonPointers: [/spec/template]}]"},
		{"auto-sync without selfHeal", &snapshot.GitOpsOwner{Mark: mark, AutoSync: true, SyncStatus: "Synced"}, false, "does not revert it by itself"},
		{"selfHeal, template ignored", &snapshot.GitOpsOwner{Mark: mark, AutoSync: true, SelfHeal: true, SyncStatus: "Synced", Ignore: ignored}, false, "does not revert it by itself"},
		{"Application not read", &snapshot.GitOpsOwner{Mark: mark}, true, "its settings are assumed"},
		{"Flux, not suspended", &snapshot.GitOpsOwner{Mark: &snapshot.GitOpsMark{Tool: "Flux", Kind: "Kustomization", Namespace: "flux-system", Name: "apps"}, AutoSync: true, SelfHeal: true, Interval: "5m"}, true,
			"`flux suspend kustomization apps -n flux-system`"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := exampleView(t)
			v.GitOps = c.owner
			p := plan(t, v, "v1.9.3")
			if c.owner == nil {
				if p.GitOps != nil {
					t.Fatalf("GitOps without a mark: %+v", p.GitOps)
				}
				return
			}
			if p.GitOps == nil || p.GitOps.UndoReverted != c.revert {
				t.Fatalf("undoReverted want %v, got %+v", c.revert, p.GitOps)
			}
			if all := p.GitOps.StopFight + " " + strings.Join(p.GitOps.Notes, " "); !strings.Contains(all, c.says) {
				t.Errorf("want %q in %s", c.says, all)
			}
		})
	}
}

// TestGitOpsRouterFightFoughtToo: the VirtualService's weights were last
// written by a GitOps manager (a sync re-applying Git's weights): escape
// says promote and abort are fought too and prints the change that stops
// it; with the controller's write last it says nothing of the kind.
func TestGitOpsRouterFightFoughtToo(t *testing.T) {
	for _, c := range []struct {
		manager string
		fought  bool
		says    string
	}{
		{"argocd-controller", true, "jqPathExpressions: [.spec.http[].route[].weight]"},
		{"kustomize-controller", true, "kustomize.toolkit.fluxcd.io/ssa: IfNotPresent"},
		{"rollouts-controller", false, ""},
	} {
		t.Run(c.manager, func(t *testing.T) {
			v := exampleView(t)
			found := false
			for _, u := range v.Workload.Router.Objects {
				if u.GetKind() != "VirtualService" {
					continue
				}
				found = true
				now := metav1.NewTime(v.Now.Add(-5 * time.Second))
				u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: c.manager, Operation: metav1.ManagedFieldsOperationUpdate, Time: &now,
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:http":{}}}`)}}})
			}
			if !found {
				t.Fatal("the example has no VirtualService")
			}
			p := plan(t, v, "v1.10.2")
			if !c.fought {
				if p.GitOps != nil && len(p.GitOps.RouterFought) > 0 {
					t.Fatalf("router fought with the controller's write last: %+v", p.GitOps)
				}
				return
			}
			if p.GitOps == nil || len(p.GitOps.RouterFought) != 1 || !strings.Contains(p.GitOps.RouterFix, c.says) {
				t.Fatalf("want the VirtualService fought with %q, got %+v", c.says, p.GitOps)
			}
			if all := strings.Join(p.GitOps.Notes, " "); !strings.Contains(all, "promote and abort are fought too") {
				t.Errorf("notes do not say promote and abort are fought: %s", all)
			}
		})
	}
}

// TestGitOpsRouterMarkedFought: the controller wrote the weight back last,
// but the VirtualService carries the tracking-id of the Rollout's
// Application, which heals drift: promote and abort are fought; with the
// weights in ignoreDifferences they are not.
func TestGitOpsRouterMarkedFought(t *testing.T) {
	mark := &snapshot.GitOpsMark{Tool: "Argo CD", Kind: "Application", Group: snapshot.GroupArgoCD, Namespace: "argocd", Name: "shop", Evidence: "annotation"}
	weights := []snapshot.IgnoreRule{{Group: "networking.istio.io", Kind: "VirtualService", JQPathExpressions: []string{".spec.http[].route[].weight"}}}
	for _, c := range []struct {
		name   string
		owner  *snapshot.GitOpsOwner
		fought bool
	}{
		{"selfHeal", &snapshot.GitOpsOwner{Mark: mark, AutoSync: true, SelfHeal: true, SyncStatus: "Synced"}, true},
		{"selfHeal, weights ignored", &snapshot.GitOpsOwner{Mark: mark, AutoSync: true, SelfHeal: true, SyncStatus: "Synced", Ignore: weights}, false},
		{"no automated sync", &snapshot.GitOpsOwner{Mark: mark, SyncStatus: "Synced"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := exampleView(t)
			v.GitOps = c.owner
			for _, u := range v.Workload.Router.Objects {
				if u.GetKind() == "VirtualService" {
					u.SetAnnotations(map[string]string{"argocd.argoproj.io/tracking-id": "argocd_shop:networking.istio.io/VirtualService:" + u.GetNamespace() + "/" + u.GetName()})
				}
			}
			p := plan(t, v, "v1.10.2")
			if got := p.GitOps != nil && len(p.GitOps.RouterFought) > 0; got != c.fought {
				t.Fatalf("router fought %v, want %v: %+v", got, c.fought, p.GitOps)
			}
			if c.fought && !strings.Contains(p.GitOps.Notes[1], "Application argocd/shop puts back to Git's") {
				t.Errorf("note %q does not name the Application", p.GitOps.Notes[1])
			}
		})
	}
}
