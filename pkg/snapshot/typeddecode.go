package snapshot

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/internal/fastjson"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A file read for analysis (Read) decodes the objects that grow with a
// Rollout's size — its pods — straight from JSON into structs, as a live
// read does from protobuf: decoding 2,000 pods into maps and converting
// each map into a struct afterwards was most of a `diagnose -f`. Everything
// else goes through maps, which is what lint needs (it reports on fields
// the API types may not know). An item that does not decode cleanly into a
// struct takes the map path, so a malformed pod fails with the same error
// either way.

// typeMeta reads an object's apiVersion and kind from the start of a JSON
// object, without decoding the rest: `snapshot` writes keys in sorted
// order, so both come before metadata, and kubectl writes them first too.
// For other layouts it reads top-level members until it has both, skipping
// values without decoding them.
func typeMeta(body []byte) (apiVersion, kind string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", "", false
	}
	for dec.More() {
		tok, err := dec.Token()
		name, isName := tok.(string)
		if err != nil || !isName {
			return "", "", false
		}
		switch name {
		case "apiVersion", "kind":
			tok, err := dec.Token()
			v, isString := tok.(string)
			if err != nil || !isString {
				return "", "", false
			}
			if name == "kind" {
				kind = v
			} else {
				apiVersion = v
			}
			if apiVersion != "" && kind != "" {
				return apiVersion, kind, true
			}
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return "", "", false
			}
		}
	}
	return "", "", false
}

// decodeTypedItem decodes a JSON List item into its struct when it is a
// kind read typed (a core/v1 Pod), returning the metadata stub the snapshot
// indexes it by and the struct. ok is false for every other item and for a
// pod that does not decode cleanly (it then takes the map path).
func decodeTypedItem(body []byte) (stub map[string]interface{}, obj interface{}, ok bool) {
	t := bytes.TrimLeft(body, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return nil, nil, false
	}
	apiVersion, kind, ok := typeMeta(t)
	if !ok || apiVersion != "v1" || kind != "Pod" {
		return nil, nil, false
	}
	pod := &corev1.Pod{}
	// Case-sensitive, as the API server and the unstructured converter
	// match field names. A duplicated key declines: the map path decides
	// which value wins.
	if !fastjson.Clean(t, pod) {
		return nil, nil, false
	}
	meta, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&pod.ObjectMeta)
	if err != nil {
		return nil, nil, false
	}
	return map[string]interface{}{"apiVersion": apiVersion, "kind": kind, "metadata": meta}, pod, true
}

// podTimes bumps with every time latestTimestamp reads from an object, for a
// pod held as a stub: deriving its map only to read three kinds of
// timestamp cost as much as decoding it.
func podTimes(p *corev1.Pod, bump func(time.Time)) {
	bump(p.CreationTimestamp.Time)
	for _, mf := range p.ManagedFields {
		if mf.Time != nil {
			bump(mf.Time.Time)
		}
	}
	for _, c := range p.Status.Conditions {
		bump(c.LastTransitionTime.Time)
	}
}
