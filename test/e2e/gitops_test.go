//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
)

func init() {
	scenarios = append(scenarios,
		scenario{"gitops-fight", func(t *testing.T, h *harness) { gitopsFight(t, h, argoClientSide) }},
		scenario{"gitops-fight-ssa", func(t *testing.T, h *harness) { gitopsFight(t, h, argoServerSide) }},
		scenario{"gitops-fight-flux", func(t *testing.T, h *harness) { gitopsFight(t, h, fluxServerSide) }},
		scenario{"gitops-fight-router", gitopsRouterFight},
	)
}

// syncMode is how the scenario plays the GitOps tool's sync.
type syncMode int

const (
	// argoClientSide: Argo CD's default sync, a client-side kubectl apply
	// (an Update that keeps the last-applied-configuration annotation).
	argoClientSide syncMode = iota
	// argoServerSide: Argo CD with the ServerSideApply=true sync option, a
	// forced server-side apply as argocd-controller.
	argoServerSide
	// fluxServerSide: Flux's kustomize-controller, a forced server-side
	// apply with its toolkit labels on the object.
	fluxServerSide
)

// watchDocs runs `diagnose --watch -o json` in the background and keeps
// every document it prints; stop ends it with SIGINT and returns its exit.
type watchDocs struct {
	mu   sync.Mutex
	docs []diagnose.Report
	cmd  *exec.Cmd
	pw   *io.PipeWriter
	done chan struct{}
}

func (h *harness) watchDiagnose() *watchDocs {
	h.t.Helper()
	w := &watchDocs{done: make(chan struct{})}
	w.cmd = exec.Command(plugin, "diagnose", "app", "--watch", "-o", "json", "-n", h.ns, "--kubeconfig", kubeconfig)
	pr, pw := io.Pipe()
	w.cmd.Stdout, w.pw = pw, pw
	if err := w.cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	go func() {
		defer close(w.done)
		dec := json.NewDecoder(pr)
		for {
			var r diagnose.Report
			if err := dec.Decode(&r); err != nil {
				return
			}
			w.mu.Lock()
			w.docs = append(w.docs, r)
			w.mu.Unlock()
		}
	}()
	h.t.Cleanup(func() { w.stop() })
	return w
}

// find waits up to timeout for a document pred accepts.
func (w *watchDocs) find(timeout time.Duration, pred func(*diagnose.Report) bool) (*diagnose.Report, int) {
	end := time.Now().Add(timeout)
	for {
		w.mu.Lock()
		n := len(w.docs)
		for i := range w.docs {
			if pred(&w.docs[i]) {
				r := w.docs[i]
				w.mu.Unlock()
				return &r, n
			}
		}
		w.mu.Unlock()
		if time.Now().After(end) {
			return nil, n
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (w *watchDocs) stop() error {
	if w.cmd.ProcessState != nil {
		return nil
	}
	w.cmd.Process.Signal(os.Interrupt)
	err := w.cmd.Wait()
	w.pw.Close()
	<-w.done
	return err
}

func churnOf(r *diagnose.Report, object string) *diagnose.Churn {
	for _, c := range r.Churn {
		if c.Object == object {
			return c
		}
	}
	return nil
}

func messageOf(r *diagnose.Report, id string) string {
	for _, f := range r.Findings {
		if f.ID == id {
			return f.Message
		}
	}
	return ""
}

// gitopsFight: a GitOps fight over the Rollout's spec on the real
// controller. Argo CD and Flux do not run in the lab: their Application or
// Kustomization is stored as data (the lab installs minimal CRDs), and the
// scenario plays the sync the way the tool writes — a client-side kubectl
// apply of Git's Rollout as argocd-controller (Argo CD's default), a forced
// server-side apply as argocd-controller (Argo CD with ServerSideApply=true)
// or as kustomize-controller with Flux's labels. A second writer,
// deploy-bot, sets another image; the sync puts Git's back; twice. Each
// write takes the image field from the other writer, so managedFields end
// with one owner; the ReplicaSets' revision history keeps the back and
// forth. diagnose must report the fight (RD160) with the change that stops
// it, read the owner object (RD161), `diagnose --watch` must see the
// writers take turns live, and escape must predict that an undo is
// reverted.
func gitopsFight(t *testing.T, h *harness, mode syncMode) {
	spec := rolloutSpec{replicas: 2, steps: "[{setWeight: 50}, {pause: {}}]", mode: hostMode}
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.trafficObjects(hostMode))
	git := h.rolloutYAML(spec, "a")
	var sync func()
	var manager, title, fix, owner string
	switch mode {
	case argoClientSide, argoServerSide:
		manager = "argocd-controller"
		opts := ""
		if mode == argoServerSide {
			opts = "\n    syncOptions: [ServerSideApply=true]"
		}
		h.apply(fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: app}
spec:
  project: default
  source: {repoURL: https://git.example/shop.git, path: app, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: %s}
  syncPolicy:
    automated: {prune: true, selfHeal: true}%s
status: {sync: {status: OutOfSync}}
`, h.ns, opts))
		tracking := fmt.Sprintf("%s_app:argoproj.io/Rollout:%s/app", h.ns, h.ns)
		git = strings.Replace(git, "\n  name: app\n",
			fmt.Sprintf("\n  name: app\n  annotations: {argocd.argoproj.io/tracking-id: %q}\n", tracking), 1)
		fix = "jsonPointers: [/spec/template]"
		owner = "Application " + h.ns + "/app syncs this Rollout automatically with selfHeal"
		if mode == argoClientSide {
			title = "GitOps fight: deploy-bot sets the image, a client-side apply by argocd-controller (Argo CD's default sync) puts Git's back, twice; Application stored as data (selfHeal)"
			sync = func() { h.kubectlIn(git, "apply", "-n", h.ns, "--field-manager=argocd-controller", "-f", "-") }
		} else {
			title = "GitOps fight: deploy-bot sets the image, a forced server-side apply by argocd-controller (Argo CD with ServerSideApply=true) puts Git's back, twice; Application stored as data (selfHeal)"
			sync = func() {
				h.kubectlIn(git, "apply", "-n", h.ns, "--server-side", "--force-conflicts", "--field-manager=argocd-controller", "-f", "-")
			}
		}
	case fluxServerSide:
		manager = "kustomize-controller"
		h.apply(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps}
spec:
  interval: 5m
  path: ./apps
  prune: true
  sourceRef: {kind: GitRepository, name: shop}
  suspend: false
status:
  conditions: [{type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: main@sha1:0a1b2c3"}]
`)
		git = strings.Replace(git, "\n  labels: {", fmt.Sprintf("\n  labels: {kustomize.toolkit.fluxcd.io/name: apps, kustomize.toolkit.fluxcd.io/namespace: %s, ", h.ns), 1)
		title = "GitOps fight: deploy-bot sets the image, a forced server-side apply by kustomize-controller (Flux) puts Git's back, twice; Kustomization stored as data (interval 5m)"
		fix = "`flux suspend kustomization apps -n " + h.ns + "`"
		owner = "Flux applies this Rollout (Kustomization " + h.ns + "/apps, every 5m)"
		sync = func() {
			h.kubectlIn(git, "apply", "-n", h.ns, "--server-side", "--force-conflicts", "--field-manager=kustomize-controller", "-f", "-")
		}
	}
	revision := func(n int) {
		h.waitFor(fmt.Sprintf("revision %d", n), 30*time.Second, func() bool {
			return h.get(gvrRollout, "app").GetAnnotations()["rollout.argoproj.io/revision"] == fmt.Sprint(n)
		})
	}
	sync()
	h.healthy(o, 2, 90*time.Second)
	w := h.watchDiagnose()
	if _, n := w.find(30*time.Second, func(*diagnose.Report) bool { return true }); n == 0 {
		t.Fatal("diagnose --watch printed nothing in 30 s")
	}
	start := time.Now()
	for i := 0; i < 2; i++ {
		h.kubectl("-n", h.ns, "patch", "rollout", "app", "--field-manager=deploy-bot", "--type", "json", "-p",
			`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.example/app:b"}]`)
		revision(2 + 2*i)
		sync()
		revision(3 + 2*i)
	}
	flips := time.Since(start)
	// The watch: the writers of the spec taking turns, counted live.
	ro := "Rollout " + h.ns + "/app"
	live, docs := w.find(30*time.Second, func(r *diagnose.Report) bool {
		c := churnOf(r, ro)
		return c != nil && c.Alternations >= 3 && strings.Contains(messageOf(r, "RD160"), "took turns")
	})
	if err := w.stop(); err != nil {
		t.Errorf("--watch did not exit cleanly on SIGINT: %v", err)
	}
	var managers []string
	for _, mf := range h.get(gvrRollout, "app").GetManagedFields() {
		managers = append(managers, mf.Manager+"/"+string(mf.Operation))
	}
	rep := h.diagnose("app")
	fight, own := messageOf(rep, "RD160"), messageOf(rep, "RD161")
	p := h.plan()
	reverted := p.GitOps != nil && p.GitOps.Read && p.GitOps.UndoReverted
	liveSays := "not seen"
	if live != nil {
		c := churnOf(live, ro)
		liveSays = fmt.Sprintf("%s: %d turns in %s, %d generations", strings.Join(c.Managers, "↔"), c.Alternations, c.Span.Round(time.Second), c.Generations)
	}
	h.record(title,
		fmt.Sprintf("RD160 %v, RD161 %v, escape: undo reverted %v; --watch: %s", fight != "", own != "", reverted, liveSays),
		fmt.Sprintf("rollout revision 5 after 4 template writes (%.0f s); field managers left: %s; findings %s; %d watch documents", flips.Seconds(), strings.Join(managers, ", "), findingIDs(rep), docs))
	t.Logf("RD160: %s", fight)
	if live == nil {
		t.Errorf("diagnose --watch did not see the writers take turns in %d documents", docs)
	} else if c := churnOf(live, ro); !strings.Contains(strings.Join(c.Managers, " "), manager) || !strings.Contains(strings.Join(c.Managers, " "), "deploy-bot") {
		t.Errorf("--watch saw %v take turns, want %s and deploy-bot", c.Managers, manager)
	}
	for _, want := range []string{"went back to an earlier one 3 times", manager, fix} {
		if !strings.Contains(fight, want) {
			t.Errorf("RD160 %q lacks %q; findings %s", fight, want, findingIDs(rep))
		}
	}
	if !strings.Contains(own, owner) {
		t.Errorf("RD161 does not read the owner: %q, want %q", own, owner)
	}
	if !reverted || !strings.Contains(p.GitOps.StopFight, fix) {
		t.Errorf("escape does not predict the undo reverted with %q: %+v", fix, p.GitOps)
	}
}

// gitopsRouterFight: the classic fight over the router (argo-rollouts
// #2463, #3854; argo-cd #9570). The VirtualService is in Git with the
// stable at 100 and carries Argo CD's tracking-id; the Application (data)
// heals drift. The canary pauses at setWeight 50; then the sync re-applies
// the VirtualService from Git every 4 s (a client-side apply as
// argocd-controller) and the real controller, told of the change by its
// VirtualService informer, writes its 50 back. `diagnose --watch` must see
// the two take turns on the VirtualService (RD135, with the count, the
// weights and the ignoreDifferences for the routes' weights), and escape
// must say that promote and abort are fought too.
func gitopsRouterFight(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 2, steps: "[{setWeight: 50}, {pause: {}}]", mode: hostMode}
	o := h.observe(isCanaryDest(hostMode))
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
	track := func(yaml, kind, group string) string {
		id := fmt.Sprintf("%s_app:%s/%s:%s/app", h.ns, group, kind, h.ns)
		return strings.Replace(yaml, "kind: "+kind+"\nmetadata: {name: app}\n",
			fmt.Sprintf("kind: %s\nmetadata:\n  name: app\n  annotations: {argocd.argoproj.io/tracking-id: %q}\n", kind, id), 1)
	}
	objs := h.trafficObjects(hostMode)
	vsGit := track(objs[strings.Index(objs, "apiVersion: networking.istio.io"):], "VirtualService", "networking.istio.io")
	if !strings.Contains(vsGit, "tracking-id") {
		t.Fatalf("the VirtualService was not marked:\n%s", vsGit)
	}
	h.apply(objs[:strings.Index(objs, "apiVersion: networking.istio.io")])
	syncVS := func() { h.kubectlIn(vsGit, "apply", "-n", h.ns, "--field-manager=argocd-controller", "-f", "-") }
	tracking := fmt.Sprintf("%s_app:argoproj.io/Rollout:%s/app", h.ns, h.ns)
	rollout := func(image string) string {
		return strings.Replace(h.rolloutYAML(spec, image), "\n  name: app\n",
			fmt.Sprintf("\n  name: app\n  annotations: {argocd.argoproj.io/tracking-id: %q}\n", tracking), 1)
	}
	syncVS()
	h.kubectlIn(rollout("a"), "apply", "-n", h.ns, "--field-manager=argocd-controller", "-f", "-")
	h.healthy(o, 2, 90*time.Second)
	// Git moves to image b; the sync applies it; the canary pauses at 50.
	h.kubectlIn(rollout("b"), "apply", "-n", h.ns, "--field-manager=argocd-controller", "-f", "-")
	h.waitFor("the canary paused at 50 with the VirtualService at 50", 90*time.Second, func() bool {
		_, _, _, index, _ := h.status()
		return index == 1 && o.Now().CanaryWeight == 50
	})
	w := h.watchDiagnose()
	if _, n := w.find(30*time.Second, func(*diagnose.Report) bool { return true }); n == 0 {
		t.Fatal("diagnose --watch printed nothing in 30 s")
	}
	from := o.lastRV()
	start := time.Now()
	for i := 0; i < 5; i++ {
		syncVS()
		time.Sleep(4 * time.Second)
	}
	span := time.Since(start)
	// What the VirtualService went through: every write, in order.
	var weights []string
	last := int64(-2)
	turns := 0
	for _, s := range o.Samples() {
		if s.Kind != gvrVS.Resource || s.RV <= from || s.CanaryWeight == last {
			continue
		}
		if last >= 0 {
			turns++
		}
		last = s.CanaryWeight
		weights = append(weights, fmt.Sprint(s.CanaryWeight))
	}
	vs := "VirtualService " + h.ns + "/app"
	live, docs := w.find(30*time.Second, func(r *diagnose.Report) bool {
		c := churnOf(r, vs)
		return c != nil && c.Alternations >= 3 && strings.Contains(messageOf(r, "RD135"), "fought over")
	})
	if err := w.stop(); err != nil {
		t.Errorf("--watch did not exit cleanly on SIGINT: %v", err)
	}
	p := h.plan()
	fought := p.GitOps != nil && len(p.GitOps.RouterFought) > 0
	liveSays, says := "not seen", ""
	if live != nil {
		c := churnOf(live, vs)
		says = messageOf(live, "RD135")
		liveSays = fmt.Sprintf("RD135 on %s: %s, %d turns in %s", vs, strings.Join(c.Managers, "↔"), c.Alternations, c.Span.Round(time.Second))
	}
	h.record("GitOps router fight: paused at setWeight 50, argocd-controller re-applies Git's VirtualService (stable 100) every 4 s, the controller writes its 50 back; Application stored as data (selfHeal)",
		fmt.Sprintf("--watch: %s; escape: promote and abort fought %v", liveSays, fought),
		fmt.Sprintf("VirtualService canary weight over %.0f s: %s (%d turns); %d watch documents", span.Seconds(), strings.Join(weights, " → "), turns, docs))
	t.Logf("RD135 live: %s", says)
	if turns < 6 {
		t.Errorf("the VirtualService's weight changed %d times (%s): the controller did not write its weight back after the syncs", turns, strings.Join(weights, " → "))
	}
	if live == nil {
		t.Fatalf("diagnose --watch did not see the fight in %d documents", docs)
	}
	for _, want := range []string{"argocd-controller", "rollouts-controller", "jqPathExpressions: [.spec.http[].route[].weight]", "promote and abort are fought the same way"} {
		if !strings.Contains(says, want) {
			t.Errorf("RD135 %q lacks %q", says, want)
		}
	}
	if !fought || !strings.Contains(p.GitOps.RouterFix, ".spec.http[].route[].weight") || !strings.Contains(p.GitOps.Notes[1], "promote and abort are fought too") {
		t.Errorf("escape does not say promote and abort are fought: %+v", p.GitOps)
	}
}
