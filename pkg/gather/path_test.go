package gather

import (
	"context"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/model"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// podsWorld is the good Deployment fixture of the pod checks as a cluster,
// plus objects that must not end up in its snapshot.
func podsWorld(t *testing.T) []runtime.Object {
	f, err := os.Open("../podcheck/testdata/pods/deployment-good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	located, _, err := snapshot.Decode("fixture", f)
	if err != nil {
		t.Fatal(err)
	}
	var out []runtime.Object
	for _, l := range located {
		if l.Object.GetKind() != "SnapshotInfo" {
			out = append(out, l.Object)
		}
	}
	other := `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Service, metadata: {name: other, namespace: shop}, spec: {selector: {app: other}}}
- apiVersion: discovery.k8s.io/v1
  kind: EndpointSlice
  metadata: {name: other-1, namespace: shop, labels: {kubernetes.io/service-name: other}}
  addressType: IPv4
  endpoints: [{addresses: [10.9.9.9]}]
- apiVersion: networking.k8s.io/v1
  kind: Ingress
  metadata: {name: other, namespace: shop}
  spec: {defaultBackend: {service: {name: other, port: {number: 80}}}}
- {apiVersion: coordination.k8s.io/v1, kind: Lease, metadata: {name: node-9, namespace: kube-node-lease}, spec: {renewTime: "2026-11-20T10:05:00.000000Z"}}
`
	more, _, err := snapshot.Decode("other", strings.NewReader(other))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range more {
		out = append(out, l.Object)
	}
	return out
}

// TestGatherDeployment reads a Deployment's traffic path: only the Services
// that select its pods, their EndpointSlices and Ingresses, the node Leases
// of its pods, every node (its required anti-affinity needs the count), in
// a fixed number of requests; and the pod checks find nothing on it.
func TestGatherDeployment(t *testing.T) {
	dc := fakeClient(t, podsWorld(t)...)
	var n atomic.Int64
	dc.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		n.Add(1)
		return false, nil, nil
	})
	at := time.Date(2026, 11, 20, 10, 5, 5, 0, time.UTC)
	snap, err := Deployment(context.Background(), dc, Options{Namespace: "shop", Name: "web", Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, o := range snap.Objects() {
		got[o.GetKind()] = append(got[o.GetKind()], o.GetName())
	}
	for k := range got {
		sort.Strings(got[k])
	}
	want := map[string]string{
		"Service": "web", "EndpointSlice": "web-x7k2p", "Ingress": "web", "Lease": "node-1,node-2,node-3",
		"Node": "node-1,node-2,node-3,node-4", "Pod": "web-6d4b9-aaaaa,web-6d4b9-bbbbb,web-6d4b9-ccccc",
		"PodDisruptionBudget": "web", "Namespace": "shop", "Deployment": "web", "ReplicaSet": "web-6d4b9",
	}
	for k, v := range want {
		if strings.Join(got[k], ",") != v {
			t.Errorf("%s: got %v, want %s", k, got[k], v)
		}
	}
	// Deployment, ReplicaSets, pods, Services, EndpointSlices, Ingresses,
	// PDBs, Namespace, Nodes, Leases.
	if n.Load() != 10 || len(snap.Header.Gaps) > 0 {
		t.Errorf("%d requests (want 10), gaps %v", n.Load(), snap.Header.Gaps)
	}
	w, err := snap.FindWorkload("Deployment", "shop", "web")
	if err != nil {
		t.Fatal(err)
	}
	rep := diagnose.RunPods(w, model.ControllerVersion{}, diagnose.PodOptions{Grace: diagnose.GraceInput{Margin: 30 * time.Second}})
	if len(rep.Findings) > 0 || len(rep.Pods) != 3 || rep.Services[0].Ready != 3 {
		t.Errorf("findings %+v, pods %d, services %+v", rep.Findings, len(rep.Pods), rep.Services)
	}
}

func TestGatherDeploymentNotFound(t *testing.T) {
	_, err := Deployment(context.Background(), fakeClient(t), Options{Namespace: "shop", Name: "nope"})
	if err == nil || !strings.Contains(err.Error(), `deployment "nope" not found in namespace "shop"`) {
		t.Fatalf("%v", err)
	}
}
