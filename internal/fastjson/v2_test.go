//go:build goexperiment.jsonv2 && go1.27

package fastjson

import (
	"bytes"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestLeanStringMaps: the lean decoding's string maps are json/v2's but
// for the last-applied-configuration annotation, in every shape a map can
// come in, errors included.
func TestLeanStringMaps(t *testing.T) {
	const la = `"kubectl.kubernetes.io/last-applied-configuration"`
	for _, in := range []string{
		`{"a": "1", ` + la + `: "{\"apiVersion\":\"argoproj.io/v1alpha1\",\"kind\":\"Rollout\"}\n", "b": "2"}`,
		`{` + la + `: "x"}`,
		`{"kubectl.kubernetes.io\/last-applied-configuration": "x", "c": "3"}`, // the same name, escaped
		`{"a": null, "a2": "", "\u00e9": "\u00e9"}`,
		`{"a": "1", "a": "2"}`,
		`{}`, `null`,
		`{"a": 1}`, `{"a": {}}`, `{"a": true}`, `[]`, `"a"`, `{"a": "1",}`,
		`{` + la + `: {"not": "a string"}, "a": "1"}`,
	} {
		doc := `{"metadata": {"name": "p", "annotations": ` + in + `, "labels": ` + in + `}}`
		var full, lean corev1.Pod
		errFull := v2.caseSensitiveRead(bytes.NewReader([]byte(doc)), &full)
		errLean := v2.caseSensitiveReadLean(bytes.NewReader([]byte(doc)), &lean)
		if (errFull != nil) != (errLean != nil) {
			t.Errorf("%s: error %v, json/v2's %v", in, errLean, errFull)
			continue
		}
		if errFull != nil {
			continue
		}
		for _, m := range []map[string]string{full.Annotations, full.Labels} {
			delete(m, corev1.LastAppliedConfigAnnotation)
		}
		if !reflect.DeepEqual(full, lean) {
			t.Errorf("%s:\n lean %#v %#v\nv2   %#v %#v", in, lean.Annotations, lean.Labels, full.Annotations, full.Labels)
		}
	}
}
