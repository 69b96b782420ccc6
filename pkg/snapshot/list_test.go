package snapshot

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func listOf(n int, extra string) string {
	var b strings.Builder
	b.WriteString("# a comment\napiVersion: v1\nitems:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-%d\n  data:\n    script: |\n      - not an item\n      line two\n%s", i, extra)
	}
	b.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	return b.String()
}

// A large List decoded item by item gives exactly what one decode gives,
// each object at its own line.
func TestSplitListMatchesWholeDecode(t *testing.T) {
	in := listOf(40, "")
	split, _, err := Decode("l.yaml", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	defer func(old int) { minSplitItems = old }(minSplitItems)
	minSplitItems = 1 << 30
	whole, _, err := Decode("l.yaml", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(split) != 40 || !reflect.DeepEqual(split, whole) {
		t.Fatalf("split decode differs: %d vs %d objects", len(split), len(whole))
	}
	if split[1].Source.Line != 12 || split[1].Object.GetName() != "cm-1" {
		t.Fatalf("item 1 at line %d (%s), want 12", split[1].Source.Line, split[1].Object.GetName())
	}
}

// Anchors may cross items, a flow sequence is not laid out by lines: the
// split declines and the whole List is decoded as one.
func TestSplitListDeclines(t *testing.T) {
	for name, in := range map[string]string{
		"anchors": listOf(40, "  labels: &l {a: b}\n"),
		"flow":    "apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}]\n",
		"small":   listOf(3, ""),
	} {
		if _, _, ok := splitList(document{body: []byte(in), line: 1}); ok {
			t.Errorf("%s: split", name)
		}
	}
}

// A syntax error inside an item is reported at its line in the file.
func TestSplitListErrorLine(t *testing.T) {
	in := listOf(40, "")
	in = strings.Replace(in, "    name: cm-7\n", "    name: [cm-7\n", 1)
	_, _, err := Decode("l.yaml", strings.NewReader(in))
	pe, ok := err.(*ParseError)
	if !ok || pe.Line != 4+7*8+3 {
		t.Fatalf("err %v (line %v), want line %d", err, pe, 4+7*8+3)
	}
}

// BenchmarkDecodeBigList reads a List of 2,000 pod-sized items (about
// 6 MB, the size of a snapshot of a Rollout with 2,000 pods).
func BenchmarkDecodeBigList(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&sb, `- apiVersion: v1
  kind: Pod
  metadata:
    name: app-%[1]d
    namespace: shop
    labels: {app: app, rollouts-pod-template-hash: abc}
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: app-abc, uid: u, controller: true}]
    managedFields:
    - {apiVersion: v1, fieldsType: FieldsV1, manager: kube-controller-manager, operation: Update, time: "2026-08-11T03:10:00Z"}
  spec:
    nodeName: node-%[2]d
    containers:
    - name: app
      image: registry.example/app:1
      env: [{name: A, value: "1"}, {name: B, value: "2"}]
      ports: [{containerPort: 8080, name: http, protocol: TCP}]
      resources: {limits: {memory: 1Gi}, requests: {cpu: 500m, memory: 1Gi}}
  status:
    phase: Running
    conditions:
    - {type: Initialized, status: "True", lastTransitionTime: "2026-08-11T03:10:05Z"}
    - {type: Ready, status: "True", lastTransitionTime: "2026-08-11T03:11:05Z"}
    - {type: ContainersReady, status: "True", lastTransitionTime: "2026-08-11T03:11:05Z"}
    containerStatuses:
    - {name: app, ready: true, restartCount: 0, started: true, image: registry.example/app:1, imageID: "sha256:0123", state: {running: {startedAt: "2026-08-11T03:10:10Z"}}}
`, i, i%50)
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Read("big", strings.NewReader(string(data))); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSplitJSONListMatchesWholeDecode: a JSON List's items decoded one by
// one in parallel give what decoding the whole document gives, each item
// at the line where its object opens.
func TestSplitJSONListMatchesWholeDecode(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": [\n")
	for i := 0; i < 40; i++ {
		if i > 0 {
			sb.WriteString(",\n")
		}
		fmt.Fprintf(&sb, "    {\n      \"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n      \"metadata\": {\"name\": \"cm-%d\", \"namespace\": \"a\"},\n      \"data\": {\"n\": \"%d\", \"items\": \"[x]\"}\n    }", i, i)
	}
	sb.WriteString("\n  ],\n  \"metadata\": {\"resourceVersion\": \"\"}\n}\n")
	in := sb.String()
	if _, _, ok := splitJSONList(document{body: []byte(in), line: 1}); !ok {
		t.Fatal("the JSON List was not split")
	}
	split, _, err := Decode("l.json", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	defer func(old int) { minSplitItems = old }(minSplitItems)
	minSplitItems = 1 << 30
	whole, _, err := Decode("l.json", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(split) != 40 || !reflect.DeepEqual(split, whole) {
		t.Fatalf("split decode differs: %d vs %d objects", len(split), len(whole))
	}
	if split[1].Source.Line != 10 || split[1].Object.GetName() != "cm-1" {
		t.Fatalf("item 1 at line %d (%s), want 10", split[1].Source.Line, split[1].Object.GetName())
	}
}

// FuzzSplitJSONList: wherever the byte scanner splits a JSON List, decoding
// the items one by one gives exactly what decoding the whole document gives
// — the same objects, or an error both ways.
func FuzzSplitJSONList(f *testing.F) {
	f.Add(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}},{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}]}`)
	f.Add(`{"items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p\"]}"}} , {"apiVersion":"v1","kind":"Pod","metadata":{"name":"q"},"spec":{"x":[1,{"y":"}"}]}}],"kind":"List","apiVersion":"v1","metadata":{}}`)
	f.Add(`{"kind":"List","items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}} {"kind":"Pod"}],"apiVersion":"v1"}`)
	f.Add(`{"kind":"List","items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}},],"apiVersion":"v1"}`)
	f.Add(`{"kind":"List","items":[1, "x", null, {"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}],"apiVersion":"v1"}`)
	f.Add(`{"kind":"List","apiVersion":"v1","items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}],"items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"b"}}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		defer func(old int) { minSplitItems = old }(minSplitItems)
		minSplitItems = 1
		if _, _, ok := splitJSONList(document{body: []byte(in), line: 1}); !ok {
			return
		}
		split, _, errSplit := Decode("l.json", strings.NewReader(in))
		minSplitItems = 1 << 30
		whole, _, errWhole := Decode("l.json", strings.NewReader(in))
		if (errSplit == nil) != (errWhole == nil) {
			t.Fatalf("split: %v, whole: %v", errSplit, errWhole)
		}
		if errSplit == nil && !reflect.DeepEqual(objectsOf(split), objectsOf(whole)) {
			t.Fatalf("split decode differs:\n%v\n%v", objectsOf(split), objectsOf(whole))
		}
	})
}

func objectsOf(ls []Located) []map[string]interface{} {
	var out []map[string]interface{}
	for _, l := range ls {
		out = append(out, l.Object.Object)
	}
	return out
}
