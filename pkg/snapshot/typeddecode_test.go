package snapshot

import (
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
			if len(typed.stubs) < 39 {
				t.Fatalf("%d pods decoded typed, want at least 39 of 40", len(typed.stubs))
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
	if _, ok := typed.typed[odd(typed)]; ok {
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
