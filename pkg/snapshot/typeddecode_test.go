package snapshot

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// podList is a JSON List of n pods of a ReplicaSet, with extra inserted
// into pod 3 (to make it odd).
func podList(n int, extra string) string {
	var sb strings.Builder
	sb.WriteString("{\n \"apiVersion\": \"v1\",\n \"items\": [\n")
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteString(",\n")
		}
		x := ""
		if i == 3 {
			x = extra
		}
		fmt.Fprintf(&sb, `  {"metadata": {"name": "p-%d", "namespace": "a", "creationTimestamp": "2026-08-11T03:10:0%dZ",
    "labels": {"app": "x"}, "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": true}]},
   "kind": "Pod", "apiVersion": "v1"%s,
   "spec": {"nodeName": "n1", "containers": [{"name": "app", "image": "i", "ports": [{"containerPort": 8080}]}]},
   "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-08-11T03:1%d:00Z"}]}}`, i, i%10, x, i%6)
	}
	sb.WriteString("\n ],\n \"kind\": \"List\"\n}\n")
	return sb.String()
}

// readBothWays reads in with Read (pods decoded into structs) and with the
// map path (Decode, then New), and returns each snapshot's pods as structs.
func readBothWays(t *testing.T, in string) (typed, viaMaps *Snapshot, errTyped, errMaps error) {
	t.Helper()
	typed, errTyped = Read("l.json", strings.NewReader(in))
	located, hdr, err := Decode("l.json", strings.NewReader(in))
	if err != nil {
		return typed, nil, errTyped, err
	}
	objs := make([]*unstructured.Unstructured, 0, len(located))
	for _, l := range located {
		if l.typed != nil {
			t.Fatal("Decode decoded a struct; only Read should")
		}
		objs = append(objs, l.Object)
	}
	h := Header{Offline: true}
	if hdr != nil {
		h = *hdr
	}
	return typed, New(h, objs), errTyped, nil
}

func podsOf(t *testing.T, s *Snapshot) []*corev1.Pod {
	t.Helper()
	var out []*corev1.Pod
	for _, u := range s.byGroupKind("", "Pod") {
		p, err := typedOf[corev1.Pod](s, u)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestTypedPodsMatchMapPath: a JSON List's pods decoded straight into
// structs are the pods the map path gives — the same structs, the same
// objects when written out, the same "now" — in whatever order the keys
// come, and odd pods fall back to the map path.
func TestTypedPodsMatchMapPath(t *testing.T) {
	for name, extra := range map[string]string{
		"plain":             "",
		"upper-case key":    `, "Spec": {"nodeName": "elsewhere"}`,
		"duplicate key":     `, "kind": "Pod"`,
		"unknown field":     `, "futureField": {"a": [1, 2]}`,
		"managed fields":    `, "metadata2": 1`,
		"integer as string": `, "status": {"phase": "Running", "conditions": [], "hostIP": "10.0.0.1"}`,
	} {
		t.Run(name, func(t *testing.T) {
			in := podList(40, extra)
			typed, maps, err1, err2 := readBothWays(t, in)
			if err1 != nil || err2 != nil {
				t.Fatalf("errors: %v / %v", err1, err2)
			}
			if len(typed.tc.stubs) < 39 {
				t.Fatalf("%d pods decoded typed, want at least 39 of 40", len(typed.tc.stubs))
			}
			if a, b := podsOf(t, typed), podsOf(t, maps); !reflect.DeepEqual(a, b) {
				t.Fatalf("pods differ between the typed and the map path")
			}
			if !typed.Now().Equal(maps.Now()) || maps.Now().IsZero() {
				t.Fatalf("now: %v typed, %v via maps", typed.Now(), maps.Now())
			}
			a, b := typed.Objects(), maps.Objects()
			if len(a) != len(b) {
				t.Fatalf("%d vs %d objects", len(a), len(b))
			}
		})
	}
}

// TestTypedPodErrorIsTheMapPathError: a pod whose field has the wrong type
// fails with the map path's error (it is not decoded typed and silently
// zeroed).
func TestTypedPodErrorIsTheMapPathError(t *testing.T) {
	in := podList(40, "")
	at := strings.Index(in, `"p-3"`)
	in = in[:at] + strings.Replace(in[at:], `"nodeName": "n1"`, `"nodeName": "n1", "terminationGracePeriodSeconds": "thirty"`, 1)
	typed, maps, _, _ := readBothWays(t, in)
	odd := func(s *Snapshot) *unstructured.Unstructured {
		for _, u := range s.byGroupKind("", "Pod") {
			if u.GetName() == "p-3" {
				return u
			}
		}
		t.Fatal("no pod p-3")
		return nil
	}
	if _, ok := typed.tc.typed[odd(typed)]; ok {
		t.Fatal("the malformed pod was decoded typed")
	}
	_, errTyped := typedOf[corev1.Pod](typed, odd(typed))
	_, errMaps := typedOf[corev1.Pod](maps, odd(maps))
	if errTyped == nil || errMaps == nil || errTyped.Error() != errMaps.Error() {
		t.Fatalf("errors differ: %v / %v", errTyped, errMaps)
	}
}

func TestTypeMeta(t *testing.T) {
	for in, want := range map[string]string{
		`{"apiVersion":"v1","kind":"Pod","metadata":{}}`:                            "v1 Pod",
		`{"metadata":{"kind":"X","apiVersion":"y"},"kind":"Pod","apiVersion":"v1"}`: "v1 Pod",
		`{"spec":{"kind":"Pod"}}`:                                                   "",
		`{"kind": 3, "apiVersion":"v1"}`:                                            "",
		`[1]`:                                                                       "",
		`{"kind":"Pod"`:                                                             "",
	} {
		a, k, ok := typeMeta([]byte(in))
		got := ""
		if ok {
			got = a + " " + k
		}
		if got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

// richPod is a pod as the API server returns it, with the field types the
// plain pods above lack: quantities, int-or-strings, raw managedFields,
// times in container states, pointers to ints.
const richPod = `{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "r-%d", "namespace": "a", "uid": "u-%d", "resourceVersion": "1%d", "generateName": "r-",
  "creationTimestamp": "2026-08-11T03:10:00Z", "labels": {"app": "x", "rollouts-pod-template-hash": "abc"},
  "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-08-11T03:00:00Z"},
  "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": true, "blockOwnerDeletion": true}],
  "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": "2026-08-11T03:10:00Z",
   "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}}]},
 "spec": {"nodeName": "n1", "terminationGracePeriodSeconds": 45, "serviceAccountName": "default",
  "readinessGates": [{"conditionType": "target-health.elbv2.k8s.aws/tg"}],
  "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
  "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}],
  "containers": [{"name": "app", "image": "registry.example/app:b", "imagePullPolicy": "IfNotPresent",
   "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
   "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
   "readinessProbe": {"httpGet": {"path": "/ready", "port": "http", "scheme": "HTTP"}, "periodSeconds": 5, "failureThreshold": 3, "successThreshold": 1, "timeoutSeconds": 1},
   "livenessProbe": {"tcpSocket": {"port": 8080}, "initialDelaySeconds": 10},
   "lifecycle": {"preStop": {"sleep": {"seconds": 20}}},
   "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}}]}]},
 "status": {"phase": "Running", "podIP": "10.244.0.%d", "podIPs": [{"ip": "10.244.0.%d"}], "qosClass": "Burstable",
  "startTime": "2026-08-11T03:10:01Z",
  "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-08-11T03:10:09Z"},
   {"type": "target-health.elbv2.k8s.aws/tg", "status": "False", "reason": "Elb.RegistrationInProgress", "lastTransitionTime": "2026-08-11T03:10:05Z"}],
  "containerStatuses": [{"name": "app", "ready": true, "started": true, "restartCount": 2, "image": "registry.example/app:b", "imageID": "sha256:00",
   "containerID": "containerd://c", "state": {"running": {"startedAt": "2026-08-11T03:10:04Z"}},
   "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled", "startedAt": "2026-08-11T03:09:00Z", "finishedAt": "2026-08-11T03:10:03Z"}}}]}}`

// TestRichPodsMatchMapPath: pods with every kind of field the API types
// decode specially come out of the typed path exactly as out of the map
// path (the typed decoder in use depends on the toolchain: json/v2 where it
// is built in, sigs.k8s.io/json otherwise).
func TestRichPodsMatchMapPath(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"apiVersion": "v1", "kind": "List", "items": [`)
	for i := 0; i < 40; i++ {
		if i > 0 {
			sb.WriteString(",\n")
		}
		fmt.Fprintf(&sb, richPod, i, i, i, i, i)
	}
	sb.WriteString("]}\n")
	typed, maps, err1, err2 := readBothWays(t, sb.String())
	if err1 != nil || err2 != nil {
		t.Fatalf("errors: %v / %v", err1, err2)
	}
	if len(typed.tc.stubs) != 40 {
		t.Fatalf("%d of 40 rich pods decoded typed", len(typed.tc.stubs))
	}
	// Compared as JSON: a quantity's cached text, a managedFields entry's
	// whitespace and empty against absent lists differ between the two
	// decoders without changing any value a rule reads.
	a, b := podsOf(t, typed), podsOf(t, maps)
	for i := range a {
		ja, err1 := json.Marshal(a[i])
		jb, err2 := json.Marshal(b[i])
		if err1 != nil || err2 != nil || string(ja) != string(jb) {
			t.Fatalf("pod %s differs:\n typed %s\n maps  %s", a[i].Name, ja, jb)
		}
	}
	if q := a[7].Spec.Containers[0].Resources.Requests.Cpu(); q.MilliValue() != 250 {
		t.Fatalf("cpu request %v, want 250m", q)
	}
	if p := a[7].Spec.Containers[0].ReadinessProbe.HTTPGet.Port; p.StrVal != "http" {
		t.Fatalf("probe port %v, want the name http", p)
	}
}
