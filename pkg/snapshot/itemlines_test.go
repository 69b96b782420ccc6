package snapshot

import (
	"reflect"
	"testing"
)

// TestItemLinesJSON: the JSON path finds each item at the line where its
// object opens, counting from the document's first line, as the YAML path
// does for YAML.
func TestItemLinesJSON(t *testing.T) {
	doc := []byte(`{
  "apiVersion": "v1",
  "metadata": {"resourceVersion": ""},
  "items": [
    {"kind": "Pod",
     "metadata": {"name": "a"}},

    {
      "kind": "Pod", "metadata": {"name": "b", "labels": {"x": "[\"items\"]"}}
    }, {"kind": "Pod"}
  ],
  "kind": "List"
}`)
	if got, want := itemLines(doc, 10), []int{14, 17, 19}; !reflect.DeepEqual(got, want) {
		t.Fatalf("item lines = %v, want %v", got, want)
	}
	yamlDoc := []byte("apiVersion: v1\nitems:\n- kind: Pod\n  metadata: {name: a}\n- kind: Pod\nkind: List\n")
	if got, want := itemLines(yamlDoc, 1), []int{3, 5}; !reflect.DeepEqual(got, want) {
		t.Fatalf("YAML item lines = %v, want %v", got, want)
	}
	if got := itemLines([]byte(`{"items": 3}`), 1); got != nil {
		t.Fatalf("items that are no list: %v", got)
	}
}
