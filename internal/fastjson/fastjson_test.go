package fastjson

import "testing"

type obj struct {
	Name     string `json:"name"`
	Replicas *int32 `json:"replicas,omitempty"`
	Spec     struct {
		Image string `json:"image"`
	} `json:"spec"`
}

// TestClean pins what both decoders (json/v2 and sigs.k8s.io/json; make
// test runs this file with each) do with what a snapshot could hold.
func TestClean(t *testing.T) {
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
		got := Clean([]byte(tc.in), &o)
		if got != tc.clean {
			t.Errorf("Clean(%s) = %v, want %v", tc.in, got, tc.clean)
		}
		if got && (o.Name != tc.name || o.Spec.Image != tc.image) {
			t.Errorf("Clean(%s) decoded %+v", tc.in, o)
		}
	}
}

// TestCaseSensitive pins what both decoders do with a list the API server
// sends.
func TestCaseSensitive(t *testing.T) {
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
	} {
		var o obj
		err := CaseSensitive([]byte(tc.in), &o)
		if (err != nil) != tc.err {
			t.Errorf("CaseSensitive(%s): err %v", tc.in, err)
		}
		if err == nil && (o.Name != tc.name || o.Spec.Image != tc.image) {
			t.Errorf("CaseSensitive(%s) decoded %+v", tc.in, o)
		}
	}
}
