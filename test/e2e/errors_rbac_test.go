//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func init() {
	scenarios = append(scenarios, scenario{"controller-errors-rbac", rbacError})
}

// restrictedRole is the ClusterRole of the restricted controller: what the
// controller reads and writes for an Istio canary, except that it may only
// read VirtualServices (no update, which the weight change needs).
const restrictedRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[1]s}
rules:
- apiGroups: ["", apps, argoproj.io, batch, networking.k8s.io, extensions, coordination.k8s.io, events.k8s.io, policy, autoscaling, discovery.k8s.io, apiextensions.k8s.io]
  resources: ["*"]
  verbs: ["*"]
- apiGroups: [networking.istio.io]
  resources: [destinationrules]
  verbs: ["*"]
- apiGroups: [networking.istio.io]
  resources: [virtualservices]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[1]s}
subjects: [{kind: ServiceAccount, name: argo-rollouts, namespace: %[2]s}]
`

// rbacError: the controller's own identity is denied a request it needs.
// The lab's controllers run as its admin, so this scenario starts one more
// controller of its version, with an --instance-id of its own, as a
// ServiceAccount (a TokenRequest token) whose ClusterRole lacks update on
// VirtualServices. Its Rollout deploys (no weight to change) and its update
// to 50% is denied: a TrafficRoutingError Warning Event with the API
// server's "User … cannot update resource …"; RD159 must say RBAC, who and
// which verb.
func rbacError(t *testing.T, h *harness) {
	id := "e2e-rbac-" + strings.ReplaceAll(h.version, ".", "-")
	role := "e2e-rbac-" + h.ns
	h.kubectl("-n", h.ns, "create", "serviceaccount", "argo-rollouts")
	h.kubectlIn(fmt.Sprintf(restrictedRole, role, h.ns), "apply", "-f", "-")
	t.Cleanup(func() { h.kubectl("delete", "clusterrolebinding,clusterrole", role, "--ignore-not-found") })
	token := strings.TrimSpace(h.kubectl("-n", h.ns, "create", "token", "argo-rollouts", "--duration", "1h"))

	// The lab's kubeconfig with the ServiceAccount's token for credentials.
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	cfg.AuthInfos = map[string]*clientcmdapi.AuthInfo{"restricted": {Token: token}}
	ctx.AuthInfo = "restricted"
	kc := filepath.Join(stateDir, "kubeconfig-"+id)
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(kc) })

	// Slots 1–5 are the versions' e2e controllers; the default slot 0 and
	// 6–9 are free in the e2e lab (no default controller).
	slot := slices.Index(strings.Fields(labVar("CONTROLLER_VERSIONS")), h.version)
	if slot > 0 {
		slot += 5
	}
	cmd := labCmd("controller.sh", "start", h.version, id)
	cmd.Env = append(cmd.Env, "LAB_CONTROLLER_KUBECONFIG="+kc, fmt.Sprintf("LAB_CONTROLLER_SLOT=%d", slot),
		"LAB_CONTROLLER_ARGS=--alb-ingress-classes=alb-"+id)
	// Registered before the start, so a controller that started and then
	// failed its health check is stopped too.
	t.Cleanup(func() { labCmd("controller.sh", "stop", id).Run() })
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("starting the restricted controller %s: %v\n%s", id, err, out)
	}
	h.instanceID = id

	spec := rolloutSpec{replicas: 2, steps: "[{setWeight: 50}, {pause: {}}]", mode: hostMode}
	o := h.observe(isCanaryDest(hostMode))
	h.apply(h.trafficObjects(hostMode))
	h.apply(h.rolloutYAML(spec, "a"))
	h.healthy(o, 2, 90*time.Second)
	h.setImage("b")
	user := "system:serviceaccount:" + h.ns + ":argo-rollouts"
	h.checkError("the controller's ServiceAccount may not update VirtualServices", "TrafficRoutingError", "RD159",
		"("+user+" may not update virtualservices.networking.istio.io)")
}
