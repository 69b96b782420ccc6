//go:build goexperiment.jsonv2 && go1.27

package fastjson

import (
	"bytes"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestLeanStringMaps: the fleet's decoding's string maps are json/v2's but
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
		errLean := v2.caseSensitiveReadFleet(bytes.NewReader([]byte(doc)), &lean)
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

// TestFleetPodSpecs: the fleet's decoding keeps of a pod spec what json/v2
// decodes of its containers' names and images, in every shape a spec can
// come in; where json/v2 rejects a name or an image, so does it.
func TestFleetPodSpecs(t *testing.T) {
	for _, in := range []string{
		`{"containers": [{"name": "app", "image": "a:1", "env": [{"name": "X"}]}], "nodeName": "n"}`,
		`{"nodeName": "n", "containers": [{"image": "a:1", "name": "app"}, {"name": "b"}]}`,
		`{"containers": [{"name": "\u0061pp", "image": null, "name": "app2"}]}`, // escaped, null, repeated
		`{"\u0063ontainers": [{"n\u0061me": "app", "imag\u0065": "a:1"}]}`,      // escaped names
		`{"containers": [], "initContainers": [{"name": "init", "image": "i:1"}]}`,
		`{"containers": null}`, `{"containers": [null]}`, `{}`, `null`,
		`{"containers": [{"name": "a"}], "containers": [{"name": "b"}]}`,
		`{"containers": [{"name": 5}]}`, `{"containers": [{"image": {}}]}`, `{"containers": [{"image": true}]}`,
		`{"containers": {}}`, `{"containers": "a"}`, `{"containers": [1]}`, `[]`, `"spec"`,
		`{"containers": [{"name": "a",}]}`, `{"nodeName": }`,
	} {
		doc := `{"metadata": {"name": "p"}, "spec": ` + in + `}`
		var full, fleet corev1.Pod
		errFull := v2.caseSensitiveRead(bytes.NewReader([]byte(doc)), &full)
		errFleet := v2.caseSensitiveReadFleet(bytes.NewReader([]byte(doc)), &fleet)
		if (errFull != nil) != (errFleet != nil) {
			t.Errorf("%s: error %v, json/v2's %v", in, errFleet, errFull)
			continue
		}
		if errFull != nil {
			continue
		}
		full.Spec = imagesOf(full.Spec)
		if !reflect.DeepEqual(full, fleet) {
			t.Errorf("%s:\nfleet %#v\nv2    %#v", in, fleet.Spec.Containers, full.Spec.Containers)
		}
	}
}

// FuzzFleetPodSpec: whatever json/v2 decodes as a pod spec, the fleet's
// decoding decodes too, keeping its containers' names and images.
func FuzzFleetPodSpec(f *testing.F) {
	for _, in := range []string{`{"containers": [{"name": "app", "image": "a:1", "env": [{"name": "X"}]}]}`, `{"containers": [null, {}]}`, `null`, `{"nodeName": "n"}`} {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var full, fleet corev1.PodSpec
		if v2.caseSensitiveRead(bytes.NewReader([]byte(in)), &full) != nil {
			return
		}
		if err := v2.caseSensitiveReadFleet(bytes.NewReader([]byte(in)), &fleet); err != nil {
			t.Fatalf("json/v2 decodes %q, the fleet's decoding fails: %v", in, err)
		}
		if want := imagesOf(full); !reflect.DeepEqual(want, fleet) {
			t.Fatalf("%q:\nfleet %#v\nwant  %#v", in, fleet, want)
		}
	})
}
