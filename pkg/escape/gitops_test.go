package escape

import (
	"strings"
	"testing"

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
