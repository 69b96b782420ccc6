//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func init() { scenarios = append(scenarios, scenario{"gitops-fight", gitopsFight}) }

// gitopsFight: a GitOps fight on the real controller. Argo CD itself does
// not run in the lab: its Application is stored as data (the lab installs a
// minimal Application CRD), and the scenario plays the sync the way Argo
// CD's default sync writes — a client-side kubectl apply of Git's Rollout
// with the field manager argocd-controller (an Update that keeps the
// last-applied-configuration annotation). A second writer, deploy-bot, sets
// another image; the sync puts Git's back; twice. Each write takes the
// image field from the other writer, so managedFields end with one owner;
// the ReplicaSets' revision history keeps the back and forth. diagnose must
// report the fight (RD160) with the ignoreDifferences that stops it, read
// the Application (RD161), and escape must predict that an undo is reverted.
func gitopsFight(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 2, steps: "[{setWeight: 50}, {pause: {}}]", mode: hostMode}
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.trafficObjects(hostMode))
	h.apply(fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: app}
spec:
  project: default
  source: {repoURL: https://git.example/shop.git, path: app, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: %s}
  syncPolicy: {automated: {prune: true, selfHeal: true}}
status: {sync: {status: OutOfSync}}
`, h.ns))
	tracking := fmt.Sprintf("%s_app:argoproj.io/Rollout:%s/app", h.ns, h.ns)
	git := strings.Replace(h.rolloutYAML(spec, "a"), "\n  name: app\n",
		fmt.Sprintf("\n  name: app\n  annotations: {argocd.argoproj.io/tracking-id: %q}\n", tracking), 1)
	sync := func() { h.kubectlIn(git, "apply", "-n", h.ns, "--field-manager=argocd-controller", "-f", "-") }
	revision := func(n int) {
		h.waitFor(fmt.Sprintf("revision %d", n), 30*time.Second, func() bool {
			return h.get(gvrRollout, "app").GetAnnotations()["rollout.argoproj.io/revision"] == fmt.Sprint(n)
		})
	}
	start := time.Now()
	sync()
	h.healthy(o, 2, 90*time.Second)
	for i := 0; i < 2; i++ {
		h.kubectl("-n", h.ns, "patch", "rollout", "app", "--field-manager=deploy-bot", "--type", "json", "-p",
			`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.example/app:b"}]`)
		revision(2 + 2*i)
		sync()
		revision(3 + 2*i)
	}
	var managers []string
	for _, mf := range h.get(gvrRollout, "app").GetManagedFields() {
		managers = append(managers, mf.Manager+"/"+string(mf.Operation))
	}
	rep := h.diagnose("app")
	var fight, owner string
	for _, f := range rep.Findings {
		switch f.ID {
		case "RD160":
			fight = f.Message
		case "RD161":
			owner = f.Message
		}
	}
	p := h.plan()
	reverted := p.GitOps != nil && p.GitOps.Read && p.GitOps.UndoReverted
	h.record("GitOps fight: deploy-bot sets the image, a client-side apply by argocd-controller (Argo CD's default sync) puts Git's back, twice; Application stored as data (selfHeal)",
		fmt.Sprintf("RD160 %v, RD161 %v, escape: undo reverted %v", fight != "", owner != "", reverted),
		fmt.Sprintf("rollout revision 5 after 4 template writes (%.0f s); field managers left: %s; findings %s", time.Since(start).Seconds(), strings.Join(managers, ", "), findingIDs(rep)))
	t.Logf("RD160: %s", fight)
	for _, want := range []string{"went back to an earlier one 3 times", "argocd-controller", "jsonPointers: [/spec/template]", "Application " + h.ns + "/app"} {
		if !strings.Contains(fight, want) {
			t.Errorf("RD160 %q lacks %q; findings %s", fight, want, findingIDs(rep))
		}
	}
	if !strings.Contains(owner, "Application "+h.ns+"/app syncs this Rollout automatically with selfHeal") {
		t.Errorf("RD161 does not read the Application: %q", owner)
	}
	if !reverted || !strings.Contains(p.GitOps.StopFight, "jsonPointers: [/spec/template]") {
		t.Errorf("escape does not predict the undo reverted: %+v", p.GitOps)
	}
}
