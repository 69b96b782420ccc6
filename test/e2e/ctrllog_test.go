//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
)

func init() {
	scenarios = append(scenarios, scenario{"controller-log", controllerLog})
}

// controllerLog makes the real controller log errors about the Rollout and
// checks what diagnose reads of its log through the API server (pods/log of
// the controller Deployment's pod, which the lab's kwok serves from the
// controller's own log): first the spec rejected because the VirtualService
// it names is missing (InvalidSpec: auto mode reads the log; the error lines
// are class "invalid"), then a ValidatingAdmissionPolicy denying the 50%
// weight on the VirtualService (a TrafficRoutingError Event: auto reads the
// log; RD162 names the policy and counts the lines). Each count is checked
// against the lines about this Rollout that `kubectl logs` returns just
// before and just after diagnose. Last, a user whose ClusterRole lacks
// pods/log gets the gap line, not an error exit.
func controllerLog(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 2, steps: "[{setWeight: 50}, {pause: {}}]", mode: hostMode}
	o := h.observe(isCanaryDest(hostMode))
	traffic := strings.SplitN(h.trafficObjects(hostMode), "---\napiVersion: networking.istio.io", 2)
	h.apply(traffic[0])
	h.apply(h.rolloutYAML(spec, "a"))
	h.waitFor("the InvalidSpec condition", 60*time.Second, func() bool {
		phase, _, _, _, _ := h.status()
		return phase == "Degraded"
	})
	h.waitFor("the controller's error lines about the Rollout", 30*time.Second, func() bool { return h.ctrlLogCount("error", "not found") > 0 })
	h.checkLog("the VirtualService the Rollout names is missing (InvalidSpec)", "invalid", "not found", "validation rejects the Rollout's spec")

	h.apply("apiVersion: networking.istio.io" + traffic[1])
	h.healthy(o, 2, 90*time.Second)
	policy := h.denySplits("no-split-log-" + h.ns)
	h.setImage("b")
	h.waitFor("two denied weight changes in the controller's log", 90*time.Second, func() bool {
		return h.ctrlLogCount("error", "ValidatingAdmissionPolicy") >= 2
	})
	h.waitFor("the TrafficRoutingError Warning event", 60*time.Second, func() bool {
		return h.kubectl("-n", h.ns, "get", "events", "--field-selector", "type=Warning,reason=TrafficRoutingError", "-o", "name") != ""
	})
	h.checkLog("a ValidatingAdmissionPolicy rejects the 50% weight on the VirtualService", "policy", "ValidatingAdmissionPolicy", "(ValidatingAdmissionPolicy "+policy+")")

	// A snapshot keeps what was read of the log: diagnose -f of it says
	// what diagnose said.
	file := t.TempDir() + "/snap.json"
	snapCmd := exec.Command(plugin, "snapshot", "app", "-n", h.ns, "--kubeconfig", kubeconfig)
	snapOut, err := snapCmd.Output()
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if err := os.WriteFile(file, snapOut, 0o644); err != nil {
		t.Fatal(err)
	}
	offline, _ := h.runCode("diagnose", "-f", file, "-o", "json")
	var rep diagnose.Report
	if err := json.Unmarshal([]byte(offline), &rep); err != nil {
		t.Fatalf("diagnose -f of the snapshot: %v\n%s", err, offline)
	}
	kept := rep.ControllerLog != nil && len(rep.ControllerLog.Errors) > 0 && rep.ControllerLog.Errors[0].Class == "policy" && len(messages(&rep, "RD162")) > 0
	h.record("controller log: kept in a snapshot", "diagnose -f of the snapshot has the log's section and RD162", fmt.Sprintf("kept: %v", kept))
	if !kept {
		t.Errorf("the snapshot lost the controller log: %+v", rep.ControllerLog)
	}

	// Without pods/log: docs/rbac.yaml's reader role minus that rule.
	role := "rd-nolog-" + h.ns
	data, err := exec.Command("kubectl", "--kubeconfig", kubeconfig, "create", "--dry-run=client", "-o", "json", "-f", root+"/docs/rbac.yaml").Output()
	if err != nil {
		t.Fatalf("reading docs/rbac.yaml: %v", err)
	}
	nolog := readerWithoutPodsLog(t, data, role)
	h.kubectlIn(nolog, "apply", "-f", "-")
	user := "nolog-" + h.ns
	t.Cleanup(func() {
		exec.Command("kubectl", "--kubeconfig", kubeconfig, "delete", "clusterrole", role, "--ignore-not-found").Run()
	})
	h.bindUser(role, role, user)
	out, code := h.runCode("diagnose", "app", "--as", user)
	gap := regexp.MustCompile(`could not read the controller's log: .*forbidden.*; grant get on pods/log in namespace argo-rollouts`).FindString(out)
	h.record("controller log: a user without get on pods/log", "the gap line, exit 0 or 1 as without the log",
		fmt.Sprintf("exit %d; %q", code, firstOf(gap, 240)))
	if gap == "" || code > 1 {
		t.Errorf("diagnose as %s without pods/log: exit %d\n%s", user, code, out)
	}
}

// readerWithoutPodsLog is docs/rbac.yaml's rolloutdoctor-reader ClusterRole
// named name, without its pods/log rule.
func readerWithoutPodsLog(t *testing.T, listJSON []byte, name string) string {
	t.Helper()
	var items []map[string]interface{}
	dec := json.NewDecoder(bytes.NewReader(listJSON))
	for dec.More() {
		var it map[string]interface{}
		if err := dec.Decode(&it); err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	for _, it := range items {
		md, _ := it["metadata"].(map[string]interface{})
		if it["kind"] != "ClusterRole" || md["name"] != "rolloutdoctor-reader" {
			continue
		}
		md["name"] = name
		var keep []interface{}
		dropped := false
		for _, r := range it["rules"].([]interface{}) {
			res := fmt.Sprint(r.(map[string]interface{})["resources"])
			if strings.Contains(res, "pods/log") {
				dropped = true
				continue
			}
			keep = append(keep, r)
		}
		if !dropped {
			t.Fatal("docs/rbac.yaml's reader role has no pods/log rule")
		}
		it["rules"] = keep
		b, _ := json.Marshal(it)
		return string(b)
	}
	t.Fatal("no rolloutdoctor-reader ClusterRole in docs/rbac.yaml")
	return ""
}

// ctrlLogCount counts the lines at level that the version's controller
// logged about this scenario's Rollout and that contain substr, as
// `kubectl logs` returns them (text format: the lab runs the default).
func (h *harness) ctrlLogCount(level, substr string) int {
	h.t.Helper()
	out := h.kubectl("logs", "-n", "argo-rollouts", "deploy/argo-rollouts-"+h.instanceID, "--since=1h")
	about := regexp.MustCompile(` namespace=` + regexp.QuoteMeta(h.ns) + ` (.* )?rollout=app( |$)`)
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " level="+level+" ") && about.MatchString(l) && strings.Contains(l, substr) {
			n++
		}
	}
	return n
}

// checkLog runs diagnose (auto mode) between two counts of the lines the
// controller logged about the Rollout, and checks the controllerLog it
// read: the class's lines counted within those bounds, and RD162 saying so.
func (h *harness) checkLog(what, class, substr, says string) {
	h.t.Helper()
	before := h.ctrlLogCount("error", substr)
	rep := h.diagnose("app")
	after := h.ctrlLogCount("error", substr)
	human, _ := h.runCode("diagnose", "app")
	l := rep.ControllerLog
	if l == nil {
		h.t.Fatalf("%s: diagnose read no controller log (findings %s)", what, findingIDs(rep))
	}
	// The error lines read that contain substr, and the message of the
	// class among them.
	count, msg, truncated := 0, "", false
	for _, ln := range l.Lines {
		if ln.Level == "error" && strings.Contains(ln.Msg, substr) {
			count++
		}
	}
	for _, m := range l.Errors {
		if m.Class == class && strings.Contains(m.Msg, substr) && msg == "" {
			msg = m.Msg
		}
	}
	for _, s := range l.Sources {
		truncated = truncated || s.Truncated
	}
	got := messages(rep, "RD162")
	ok := false
	for _, m := range got {
		ok = ok || strings.Contains(m, says)
	}
	h.record("controller log: "+what, fmt.Sprintf("RD162 %s; class %s, the lines kubectl logs shows", says, class),
		fmt.Sprintf("read because %s; %d error line(s) with %q (kubectl logs: %d before, %d after; bounded: %v), class %s: %q; pod %s; human section: %v; findings %s",
			l.Reason, count, substr, before, after, truncated, class, firstOf(msg, 160), sourcePods(l), strings.Contains(human, "["+class+"]"), findingIDs(rep)))
	// Every line kubectl logs showed before is in the read, unless the
	// read hit its bound (then only the newest part is).
	if l.Gap != "" || count == 0 || count > after || !truncated && count < before || msg == "" {
		h.t.Errorf("%s: %d error lines with %q read (class %s: %q), kubectl logs had %d before and %d after; gap %q", what, count, substr, class, msg, before, after, l.Gap)
	}
	if !ok {
		h.t.Errorf("%s: RD162 does not say %q:\n%s", what, says, strings.Join(got, "\n"))
	}
	if !strings.Contains(human, "Controller log") || !strings.Contains(human, "["+class+"]") {
		h.t.Errorf("%s: the human report has no controller log section with [%s]:\n%s", what, class, human)
	}
}

func sourcePods(l *diagnose.ControllerLogView) string {
	var out []string
	for _, s := range l.Sources {
		out = append(out, fmt.Sprintf("%s (%s, %d bytes)", s.Pod, s.Format, s.Bytes))
	}
	return strings.Join(out, ", ")
}
