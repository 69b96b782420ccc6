package fastjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"testing/iotest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type obj struct {
	Name     string `json:"name"`
	Replicas *int32 `json:"replicas,omitempty"`
	Spec     struct {
		Image string `json:"image"`
	} `json:"spec"`
}

// TestClean pins what every decoder the toolchain builds (json/v2 and
// sigs.k8s.io/json) does with what a snapshot could hold.
func TestClean(t *testing.T) {
	if len(decoders) < 2 {
		t.Log("only sigs.k8s.io/json: this toolchain has no json/v2")
	}
	for name, d := range decoders {
		t.Run(name, func(t *testing.T) { testClean(t, d.clean) })
	}
}

func testClean(t *testing.T, clean func([]byte, any) bool) {
	for _, tc := range []struct {
		in          string
		clean       bool
		name, image string
	}{
		{in: `{"name":"a","replicas":3,"spec":{"image":"i"}}`, clean: true, name: "a", image: "i"},
		// Case-sensitive: "Name" is not the field name, so it is unknown.
		{in: `{"Name":"a","name":"b","spec":{}}`, clean: true, name: "b"},
		{in: `{"name":"a","future":{"x":[1,2]},"spec":{}}`, clean: true, name: "a"},
		{in: `{"name":"a","name":"b","spec":{}}`, clean: false},
		{in: `{"name":"a","replicas":5000000000}`, clean: false},
		{in: `{"name":"a","replicas":"3"}`, clean: false},
		{in: `{"name":"a",`, clean: false},
	} {
		var o obj
		got := clean([]byte(tc.in), &o)
		if got != tc.clean {
			t.Errorf("Clean(%s) = %v, want %v", tc.in, got, tc.clean)
		}
		if got && (o.Name != tc.name || o.Spec.Image != tc.image) {
			t.Errorf("Clean(%s) decoded %+v", tc.in, o)
		}
	}
}

// TestCaseSensitive pins what every decoder does with a list the API
// server sends.
func TestCaseSensitive(t *testing.T) {
	for name, d := range decoders {
		t.Run(name, func(t *testing.T) { testCaseSensitive(t, d.caseSensitive) })
		// Streamed one byte per read, so that every value crosses a refill.
		t.Run(name+"/read", func(t *testing.T) {
			testCaseSensitive(t, func(data []byte, v any) error {
				return d.caseSensitiveRead(iotest.OneByteReader(bytes.NewReader(data)), v)
			})
		})
	}
}

func testCaseSensitive(t *testing.T, caseSensitive func([]byte, any) error) {
	for _, tc := range []struct {
		in, name, image string
		err             bool
	}{
		{in: `{"name":"a","replicas":3,"spec":{"image":"i"}}`, name: "a", image: "i"},
		{in: `{"Name":"a","name":"b","spec":{}}`, name: "b"},
		{in: `{"name":"a","future":{"x":[1,2]},"spec":{}}`, name: "a"},
		{in: `{"name":"a","name":"b","spec":{}}`, name: "b"},
		{in: `{"name":"a","replicas":5000000000}`, err: true},
		{in: `{"name":"a","replicas":"3"}`, err: true},
		{in: `{"name":"a",`, err: true},
		{in: `{"name":"a"} {"name":"b"}`, err: true},
	} {
		var o obj
		err := caseSensitive([]byte(tc.in), &o)
		if (err != nil) != tc.err {
			t.Errorf("CaseSensitive(%s): err %v", tc.in, err)
		}
		if err == nil && (o.Name != tc.name || o.Spec.Image != tc.image) {
			t.Errorf("CaseSensitive(%s) decoded %+v", tc.in, o)
		}
	}
}

// TestDecodersAgreeOnAPod: a pod as the API server returns it, with the
// field types the API decodes specially (quantities, int-or-strings, times,
// raw managedFields), decodes to the same pod with every decoder.
func TestDecodersAgreeOnAPod(t *testing.T) {
	const pod = `{"apiVersion": "v1", "kind": "Pod",
 "metadata": {"name": "p", "namespace": "a", "creationTimestamp": "2026-08-11T03:10:00Z", "labels": {"app": "x"},
  "managedFields": [{"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": "2026-08-11T03:10:00Z",
   "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:conditions": {}}}}]},
 "spec": {"nodeName": "n1", "terminationGracePeriodSeconds": 45,
  "containers": [{"name": "app", "image": "i", "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}},
   "readinessProbe": {"httpGet": {"path": "/ready", "port": "http"}, "periodSeconds": 5},
   "livenessProbe": {"tcpSocket": {"port": 8080}}, "lifecycle": {"preStop": {"sleep": {"seconds": 20}}}}]},
 "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-08-11T03:10:09Z"}],
  "containerStatuses": [{"name": "app", "ready": true, "restartCount": 2, "image": "i", "imageID": "",
   "state": {"running": {"startedAt": "2026-08-11T03:10:04Z"}},
   "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled", "startedAt": "2026-08-11T03:09:00Z", "finishedAt": "2026-08-11T03:10:03Z"}}}]}}`
	var want string
	for name, d := range decoders {
		var p corev1.Pod
		if !d.clean([]byte(pod), &p) {
			t.Fatalf("%s: the pod does not decode", name)
		}
		if q := p.Spec.Containers[0].Resources.Requests.Cpu(); q.MilliValue() != 250 || p.Spec.Containers[0].ReadinessProbe.HTTPGet.Port.StrVal != "http" {
			t.Fatalf("%s: decoded %+v", name, p.Spec.Containers[0])
		}
		got, err := json.Marshal(&p)
		if err != nil {
			t.Fatal(err)
		}
		if want == "" {
			want = string(got)
		} else if string(got) != want {
			t.Fatalf("%s decodes the pod otherwise:\n%s\n%s", name, got, want)
		}
	}
}

// TestTimesAsTheMethodDecodes: every decoder makes of a time what
// metav1.Time's own UnmarshalJSON makes of it, errors included, as a value
// and through a pointer (null leaves the pointer nil).
func TestTimesAsTheMethodDecodes(t *testing.T) {
	for _, in := range []string{`null`, `"2026-08-11T03:10:09Z"`, `"2026-08-11T05:10:09+02:00"`, `"2026-08-11T03:10:09.5Z"`, `"2026-08-11T03:10:09\u005a"`, `"2026-08-11T03:10:09\u00"`, `true`, `"yesterday"`, `""`, `5`, `{}`} {
		var want metav1.Time
		wantErr := want.UnmarshalJSON([]byte(in))
		for name, d := range decoders {
			var got struct {
				T metav1.Time  `json:"t"`
				P *metav1.Time `json:"p"`
			}
			doc := []byte(`{"t":` + in + `,"p":` + in + `}`)
			err := d.caseSensitive(doc, &got)
			if (err != nil) != (wantErr != nil) {
				t.Errorf("%s %s: err %v, the method's %v", name, in, err, wantErr)
				continue
			}
			if err != nil {
				continue
			}
			if !reflect.DeepEqual(got.T, want) {
				t.Errorf("%s %s: %#v, the method's %#v", name, in, got.T, want)
			}
			if in == "null" {
				if got.P != nil {
					t.Errorf("%s: null made a time", name)
				}
			} else if got.P == nil || !reflect.DeepEqual(*got.P, want) {
				t.Errorf("%s %s: pointer %v, the method's %#v", name, in, got.P, want)
			}
		}
	}
}

// TestFleetLeavesOutWhatAScanDoesNotRead: CaseSensitiveReadFleet decodes
// what CaseSensitiveRead does, but for managedFields, which json/v2 skips
// (and still rejects when they are not JSON), and a pod spec, of which it
// keeps the containers' names and images.
func TestFleetLeavesOutWhatAScanDoesNotRead(t *testing.T) {
	const doc = `{"items": [{"metadata": {"name": "a", "creationTimestamp": "2026-08-11T03:10:00Z",
	  "managedFields": [{"manager": "argocd-controller", "operation": "Apply", "time": "2026-08-11T03:10:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:template": {}}}}],
	  "labels": {"app": "a"}}, "spec": {"nodeName": "n1", "containers": [{"name": "app", "image": "registry.example/app:2", "env": [{"name": "A", "value": "1"}],
	  "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}}}, {"name": "log", "image": "fluent-bit:3"}], "volumes": [{"name": "tmp", "emptyDir": {}}]}}, null]}`
	type list struct {
		Items []*corev1.Pod `json:"items"`
	}
	for name, d := range decoders {
		var full, fleet list
		if err := d.caseSensitiveRead(bytes.NewReader([]byte(doc)), &full); err != nil {
			t.Fatal(err)
		}
		if err := d.caseSensitiveReadFleet(bytes.NewReader([]byte(doc)), &fleet); err != nil {
			t.Fatal(err)
		}
		if len(full.Items) != 2 || full.Items[0] == nil || len(full.Items[0].ManagedFields) != 1 || full.Items[0].Spec.NodeName != "n1" {
			t.Fatalf("%s: the full decoding lost managedFields or the spec: %+v", name, full.Items)
		}
		if name == "encoding/json/v2" {
			if fleet.Items[0].ManagedFields != nil {
				t.Errorf("%s: managedFields decoded: %+v", name, fleet.Items[0].ManagedFields)
			}
			full.Items[0].Spec = imagesOf(full.Items[0].Spec)
		}
		full.Items[0].ManagedFields, fleet.Items[0].ManagedFields = nil, nil
		if !reflect.DeepEqual(full, fleet) {
			t.Errorf("%s: the fleet's decoding differs beyond managedFields and the pod spec:\n%+v\n%+v", name, full.Items[0], fleet.Items[0])
		}
		bad := `{"items": [{"metadata": {"name": "a", "managedFields": [{"manager": }]}}]}`
		if err := d.caseSensitiveReadFleet(bytes.NewReader([]byte(bad)), &fleet); err == nil {
			t.Errorf("%s: managedFields that are not JSON decoded", name)
		}
	}
}

// imagesOf is what the fleet's decoding keeps of a pod spec.
func imagesOf(s corev1.PodSpec) corev1.PodSpec {
	var out corev1.PodSpec
	if s.Containers != nil {
		out.Containers = []corev1.Container{}
	}
	for _, c := range s.Containers {
		out.Containers = append(out.Containers, corev1.Container{Name: c.Name, Image: c.Image})
	}
	return out
}
