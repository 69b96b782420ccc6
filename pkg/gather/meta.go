package gather

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// metaMap is metadata as runtime.DefaultUnstructuredConverter.ToUnstructured
// makes it (the same keys, omitted when empty, and value types), written
// out: the converter walks the struct by reflection, and for the thousands
// of ReplicaSets and Rollouts of a fleet that was a tenth of a scan's CPU.
// managedFields are left out, as every object read drops them. A test
// compares the two on every field of ObjectMeta and fails when the type
// gains one.
func metaMap(m *metav1.ObjectMeta) map[string]interface{} {
	out := make(map[string]interface{}, 8)
	str := func(k, v string) {
		if v != "" {
			out[k] = v
		}
	}
	str("name", m.Name)
	str("generateName", m.GenerateName)
	str("namespace", m.Namespace)
	str("selfLink", m.SelfLink)
	str("uid", string(m.UID))
	str("resourceVersion", m.ResourceVersion)
	if m.Generation != 0 {
		out["generation"] = m.Generation
	}
	// The converter leaves a zero time out; a set one is RFC 3339 in UTC.
	if !m.CreationTimestamp.IsZero() {
		out["creationTimestamp"] = m.CreationTimestamp.UTC().Format(time.RFC3339)
	}
	if m.DeletionTimestamp != nil {
		out["deletionTimestamp"] = timeValue(*m.DeletionTimestamp)
	}
	if m.DeletionGracePeriodSeconds != nil {
		out["deletionGracePeriodSeconds"] = *m.DeletionGracePeriodSeconds
	}
	if len(m.Labels) > 0 {
		out["labels"] = stringMap(m.Labels)
	}
	if len(m.Annotations) > 0 {
		out["annotations"] = stringMap(m.Annotations)
	}
	if len(m.OwnerReferences) > 0 {
		refs := make([]interface{}, len(m.OwnerReferences))
		for i, r := range m.OwnerReferences {
			ref := map[string]interface{}{"apiVersion": r.APIVersion, "kind": r.Kind, "name": r.Name, "uid": string(r.UID)}
			if r.Controller != nil {
				ref["controller"] = *r.Controller
			}
			if r.BlockOwnerDeletion != nil {
				ref["blockOwnerDeletion"] = *r.BlockOwnerDeletion
			}
			refs[i] = ref
		}
		out["ownerReferences"] = refs
	}
	if len(m.Finalizers) > 0 {
		fs := make([]interface{}, len(m.Finalizers))
		for i, f := range m.Finalizers {
			fs[i] = f
		}
		out["finalizers"] = fs
	}
	return out
}

func timeValue(t metav1.Time) interface{} {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func stringMap(m map[string]string) map[string]interface{} {
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
