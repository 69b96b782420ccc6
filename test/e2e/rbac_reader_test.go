//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
)

func init() {
	scenarios = append(scenarios, scenario{"reader-without-replicasets", readerWithoutReplicaSets})
}

// readerWithoutReplicaSets: a user bound to the project's own reader role
// (docs/rbac.yaml) less ReplicaSets, as a role written by hand often is,
// looks at a canary paused at 20% by impersonation on the real API server.
// The ReplicaSets it may not read are not ReplicaSets that do not exist:
// diagnose must not say "no canary pod is available" or "there is no stable
// ReplicaSet", scan must not show 0 available pods, timeline must not put
// the canary's weight on none of its pods, and escape must refuse
// to plan (from no ReplicaSets, undo has no revision to go to and waiting
// looks safe). What the API server does is the same for every controller
// version, so it runs on the newest only.
func readerWithoutReplicaSets(t *testing.T, h *harness) {
	if h.version != versions[len(versions)-1] {
		t.Skip("the API server's refusal is the same for every controller version: run on the newest")
	}
	spec := rolloutSpec{replicas: 5, steps: "[{setWeight: 20}, {pause: {}}]", mode: hostMode}
	o := h.observe(isCanaryDest(hostMode))
	h.firstPause(o, spec, 20)

	doc, err := os.ReadFile(filepath.Join(root, "docs/rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role, _, _ := strings.Cut(string(doc), "\n---")
	user := "e2e-no-rs-" + h.ns
	for _, edit := range [][2]string{{"name: rolloutdoctor-reader", "name: " + user}, {"resources: [replicasets, deployments]", "resources: [deployments]"}} {
		if !strings.Contains(role, edit[0]) {
			t.Fatalf("docs/rbac.yaml's first document has no %q: this scenario edits it", edit[0])
		}
		role = strings.Replace(role, edit[0], edit[1], 1)
	}
	h.kubectlIn(role, "apply", "-f", "-")
	t.Cleanup(func() { h.kubectl("delete", "clusterrole", user, "--ignore-not-found") })
	h.bindUser(user, user, user)

	// As the admin: the ReplicaSets are there, the canary's pod is available.
	if rep := h.diagnose("app"); len(rep.Sets) == 0 || rep.ReplicaSetsUnread != nil {
		t.Fatalf("as the admin: %d ReplicaSets, unread %v", len(rep.Sets), rep.ReplicaSetsUnread)
	}

	cmd := exec.Command(plugin, "diagnose", "app", "-o", "json", "--as", user, "-n", h.ns, "--kubeconfig", kubeconfig)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	rep := &diagnose.Report{}
	if jerr := json.Unmarshal(stdout.Bytes(), rep); jerr != nil {
		t.Fatalf("diagnose as %s: %v, %v\n%s%s", user, err, jerr, stdout.String(), stderr.String())
	}
	g := rep.ReplicaSetsUnread
	if g == nil || g.Reason != "Forbidden" || g.Namespace != h.ns || !strings.Contains(g.Message, user) {
		t.Fatalf("diagnose as %s: replicaSetsUnread %+v, want Forbidden in %s naming the user", user, g, h.ns)
	}
	for _, f := range rep.Findings {
		switch f.ID {
		case "RD101", "RD102", "RD103", "RD108":
			t.Errorf("diagnose as %s reports %s from ReplicaSets it did not read: %s", user, f.ID, f.Message)
		}
	}
	if len(rep.Sets) != 0 || rep.Model != nil || rep.Traffic == nil || rep.Traffic.CanaryWeight != 20 || rep.Traffic.NextBranch != "" {
		t.Errorf("diagnose as %s: %d ReplicaSets, model %v, traffic %+v: want none, none, the status's weight 20 and no next pass", user, len(rep.Sets), rep.Model != nil, rep.Traffic)
	}
	human, _ := h.runCode("diagnose", "app", "--as", user, "--color", "never")
	for _, want := range []string{"canary ?/? available ← 20%", "next pass: not known: the ReplicaSets were not read", "not read: replicasets.apps in " + h.ns + ": Forbidden", "grant list on replicasets.apps"} {
		if !strings.Contains(human, want) {
			t.Errorf("diagnose as %s does not say %q:\n%s", user, want, human)
		}
	}
	if strings.Contains(human, "no canary pod is available") || strings.Contains(human, "no stable ReplicaSet") {
		t.Errorf("diagnose as %s reasons from ReplicaSets it did not read:\n%s", user, human)
	}

	scan, _ := h.runCode("scan", "--as", user, "--color", "never")
	if !strings.Contains(scan, "20% on ?/5") || !strings.Contains(scan, "gap: could not read replicasets.apps in "+h.ns+": Forbidden") {
		t.Errorf("scan as %s:\n%s", user, scan)
	}

	tl, _ := h.runCode("timeline", "app", "--as", user, "--color", "never")
	if strings.Contains(tl, "Worst moment") || !strings.Contains(tl, "  revisions: not read: replicasets.apps in "+h.ns+": Forbidden") {
		t.Errorf("timeline as %s:\n%s", user, tl)
	}

	plan, code := h.runCode("escape", "app", "--as", user)
	if code != 2 || !strings.Contains(plan, "rollout "+h.ns+"/app: no way out can be planned without its ReplicaSets, which were not read (replicasets.apps in "+h.ns+": Forbidden") {
		t.Errorf("escape as %s: exit %d, want 2 and a refusal:\n%s", user, code, plan)
	}
	h.record("a reader without ReplicaSets (docs/rbac.yaml less replicasets), canary paused at setWeight 20 of 5",
		"ReplicaSets not read (Forbidden): no finding from them, availability ?, escape refuses",
		"diagnose: replicaSetsUnread "+g.String()+"; scan: 20% on ?/5; escape: exit 2")
}
