package router

import (
	"encoding/json"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// IsControllerManager recognises the argo-rollouts controller among field
// managers. The API server names a manager after the client's user agent,
// which client-go derives from the binary: rollouts-controller in the
// project's images (a renamed binary keeps the prefix in practice).
func IsControllerManager(m string) bool {
	return strings.HasPrefix(m, "rollouts-controller") || strings.Contains(m, "argo-rollouts")
}

// writers finds, in u's managedFields, the last writer of the field at path
// (fieldsV1 keys such as "f:metadata", "f:annotations", "f:KEY") and the
// controller's last write of the object. A manager owns the field when its
// field set holds the whole path: the paths end at an annotation, a number
// or the list the weights are in (a CRD's lists are atomic unless its schema
// says otherwise, so the list is owned whole). A shorter path ending in {}
// ("f:weighted": {}) is a manager that set the map, not what is in it.
func writers(u *unstructured.Unstructured, path ...string) (last *Writer, controller *time.Time) {
	for _, mf := range u.GetManagedFields() {
		if mf.FieldsV1 == nil {
			continue
		}
		var t time.Time
		if mf.Time != nil {
			t = mf.Time.Time
		}
		isCtl := IsControllerManager(mf.Manager)
		if isCtl && (controller == nil || t.After(*controller)) && mf.Subresource == "" {
			tt := t
			controller = &tt
		}
		var tree map[string]interface{}
		if err := json.Unmarshal(mf.FieldsV1.Raw, &tree); err != nil {
			continue
		}
		if !owns(tree, path) {
			continue
		}
		if last == nil || t.After(last.Time) || (t.Equal(last.Time) && !isCtl) {
			last = &Writer{Manager: mf.Manager, Operation: string(mf.Operation), Time: t, Controller: isCtl}
		}
	}
	return last, controller
}

func owns(tree map[string]interface{}, path []string) bool {
	var cur interface{} = tree
	for _, p := range path {
		m, ok := cur.(map[string]interface{})
		if !ok {
			return false
		}
		if cur, ok = m[p]; !ok {
			return false
		}
	}
	return true
}

// fieldPath turns "metadata.annotations" plus a key into fieldsV1 keys.
func fieldPath(parts ...string) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = "f:" + p
	}
	return out
}

// stamp records the writers of the weight field in o.
func stamp(o *Object, u *unstructured.Unstructured, path ...string) {
	if u == nil {
		return
	}
	o.Writer, o.ControllerWrote = writers(u, path...)
}

// WeightWriter is the last writer of the weights of a router object as a
// watch delivers it (diagnose --watch sees every resourceVersion, also the
// ones the controller overwrites before the next full read): an Istio
// VirtualService's http routes, an nginx Ingress's canary-weight
// annotation (whatever its prefix). Nil for other objects, or when
// managedFields do not say.
func WeightWriter(u *unstructured.Unstructured) *Writer {
	switch {
	case u.GetKind() == "VirtualService" && strings.HasPrefix(u.GetAPIVersion(), "networking.istio.io/"):
		w, _ := writers(u, fieldPath("spec", "http")...)
		return w
	case u.GetKind() == "Ingress":
		for k := range u.GetAnnotations() {
			if strings.HasSuffix(k, "/canary-weight") {
				w, _ := writers(u, fieldPath("metadata", "annotations", k)...)
				return w
			}
		}
	}
	return nil
}
