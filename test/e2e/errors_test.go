//go:build e2e

package e2e

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
)

func init() {
	scenarios = append(scenarios, scenario{"controller-errors", controllerErrors}, scenario{"controller-errors-quota", quotaError})
}

// messages returns the messages of rule id's findings, with their severity.
func messages(rep *diagnose.Report, id string) []string {
	var out []string
	for _, f := range rep.Findings {
		if f.ID == id {
			out = append(out, f.Severity.String()+": "+f.Message)
		}
	}
	return out
}

// controllerErrors makes the real controller report three kinds of error,
// one after the other, and checks the finding for each: the VirtualService
// it names is missing (the controller's validation rejects the spec: an
// InvalidSpec condition, no Warning Event; RD113's, not RD159's); a
// ValidatingAdmissionPolicy (in-tree, CEL: no webhook server needed)
// rejects its 50% weight on the VirtualService; and (quotaError) a
// ResourceQuota refuses the canary's ReplicaSet.
func controllerErrors(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 2, steps: "[{setWeight: 50}, {pause: {}}]", mode: hostMode}
	o := h.observe(isCanaryDest(hostMode))
	traffic := strings.SplitN(h.trafficObjects(hostMode), "---\napiVersion: networking.istio.io", 2)
	h.apply(traffic[0])
	h.apply(h.rolloutYAML(spec, "a"))
	h.checkError("the VirtualService the Rollout names is missing", "InvalidSpec", "RD113", "not found")
	h.apply("apiVersion: networking.istio.io" + traffic[1])
	h.healthy(o, 2, 90*time.Second)

	h.denySplits("no-split-" + h.ns)
	h.setImage("b")
	h.checkError("a ValidatingAdmissionPolicy rejects the 50% weight on the VirtualService", "TrafficRoutingError", "RD159", "a ValidatingAdmissionPolicy rejects the controller's write")
}

// quotaError: a ResourceQuota refuses the canary's ReplicaSet
// (ReplicaSetCreateError). In its own namespace: after a minute of refused
// weight changes the controller backs the first Rollout off for longer than
// a test waits.
func quotaError(t *testing.T, h *harness) {
	spec := rolloutSpec{replicas: 2, steps: "[{setWeight: 50}, {pause: {}}]", mode: hostMode}
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.trafficObjects(hostMode))
	h.apply(h.rolloutYAML(spec, "a"))
	h.healthy(o, 2, 90*time.Second)
	h.apply("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: rs}\nspec: {hard: {count/replicasets.apps: \"1\"}}\n")
	h.setImage("b")
	h.checkError("a ResourceQuota refuses the canary's ReplicaSet", "ReplicaSetCreateError", "RD159", "ResourceQuota")
}

func (h *harness) checkError(what, reason, id, says string) {
	h.t.Helper()
	h.checkErrorMsg(what, reason, "", id, says)
}

// checkErrorMsg waits for a Warning Event of the reason whose message has
// msg (or the InvalidSpec condition), then checks that diagnose's finding
// id says says, and that RD159 is quiet when id is another rule.
// warningSeen polls the namespace's Warning Events for one of reason whose
// message contains msg, for up to timeout, without failing the test.
func (h *harness) warningSeen(reason, msg string, timeout time.Duration) bool {
	h.t.Helper()
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(time.Second) {
		out := h.kubectl("-n", h.ns, "get", "events", "--field-selector", "type=Warning,reason="+reason, "-o", `jsonpath={range .items[*]}{.message}{"\n"}{end}`)
		if strings.Contains(out, msg) {
			return true
		}
	}
	return false
}

func (h *harness) checkErrorMsg(what, reason, msg, id, says string) {
	h.t.Helper()
	var seen string
	h.waitFor("a "+reason+" Warning event", 60*time.Second, func() bool {
		if reason == "InvalidSpec" { // a condition, not an event
			seen = h.invalidSpec()
			return seen != ""
		}
		out := h.kubectl("-n", h.ns, "get", "events", "--field-selector", "type=Warning,reason="+reason, "-o", `jsonpath={range .items[*]}{.message}{"\n"}{end}`)
		seen = ""
		for _, m := range strings.Split(strings.TrimSpace(out), "\n") {
			if m != "" && strings.Contains(m, msg) {
				seen = strings.TrimSpace(seen + " " + m)
			}
		}
		return seen != ""
	})
	rep := h.diagnose("app")
	got := messages(rep, id)
	ok := false
	for _, m := range got {
		ok = ok || strings.Contains(m, says)
	}
	kind := "Warning"
	if reason == "InvalidSpec" {
		kind = "condition"
	}
	// A port of the test's own servers changes from run to run.
	seen = loopbackPort.ReplaceAllString(seen, "127.0.0.1:PORT")
	h.record("controller error: "+what, id+" "+says, fmt.Sprintf("%s %s %q; %s %d finding(s); findings %s", kind, reason, firstOf(seen, 200), id, len(got), findingIDs(rep)))
	if !ok {
		h.t.Errorf("%s: %s does not say %q:\n%s", what, id, says, strings.Join(got, "\n"))
	}
	if id != "RD159" && len(messages(rep, "RD159")) > 0 {
		h.t.Errorf("%s: RD159 reports it too: %s", what, messages(rep, "RD159"))
	}
}

var loopbackPort = regexp.MustCompile(`127\.0\.0\.1:\d+`)

func firstOf(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// invalidSpec is the message of the Rollout's InvalidSpec condition, or ""
// while it has none.
func (h *harness) invalidSpec() string {
	u := h.get(gvrRollout, "app")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]interface{}); m["type"] == "InvalidSpec" && m["status"] == "True" {
			msg, _ := m["message"].(string)
			return msg
		}
	}
	return ""
}

// denySplits makes the API server refuse any VirtualService weight other
// than 0 and 100 in the scenario's namespace, by a ValidatingAdmissionPolicy
// named name (removed when the test ends), and returns name.
func (h *harness) denySplits(name string) string {
	h.t.Helper()
	h.admissionPolicy(name, `{apiGroups: [networking.istio.io], apiVersions: ["*"], operations: [UPDATE], resources: [virtualservices]}`,
		"object.spec.http.all(h, h.route.all(r, !has(r.weight) || r.weight == 0 || r.weight == 100))", "traffic splits are not allowed in this namespace")
	return name
}

// admissionPolicy denies the requests that rule matches in the scenario's
// namespace unless expression holds. It returns the policy's removal
// (also run when the test ends).
func (h *harness) admissionPolicy(name, rule, expression, message string) (remove func()) {
	h.t.Helper()
	h.kubectlIn(fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: %[1]s}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [%[3]s]
  validations:
  - expression: %[4]q
    message: %[5]s
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: %[1]s}
spec:
  policyName: %[1]s
  validationActions: [Deny]
  matchResources: {namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %[2]s}}}
`, name, h.ns, rule, expression, message), "apply", "-f", "-")
	var once sync.Once
	remove = func() {
		once.Do(func() {
			exec.Command("kubectl", "--kubeconfig", kubeconfig, "delete", "validatingadmissionpolicybinding,validatingadmissionpolicy", name, "--ignore-not-found").Run()
		})
	}
	h.t.Cleanup(remove)
	time.Sleep(2 * time.Second) // the policy is read from an informer
	return remove
}
