package gather

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// unmarshalFleetReplicaSet decodes, from a ReplicaSet's protobuf, what a
// fleet scan reads of it: the metadata without managedFields, the spec
// without the pod template's body, and the status. Of the template it keeps
// the metadata and each container's name and image, which the model matches
// while the controller has not yet observed a new spec (model.FromView).
//
// A fleet read holds every ReplicaSet of every Rollout's history
// (revisionHistoryLimit keeps ten by default), and the pod templates are
// most of their bytes: env, volumes, probes, resources, none of which a
// scan reads from a ReplicaSet (the pod checks read the Rollout's template,
// and scan runs none). Skipping them is skipping bytes, not decoding them.
//
// Field numbers are those of k8s.io/api/apps/v1 and core/v1 generated.proto
// (ReplicaSet: metadata 1, spec 2, status 3; ReplicaSetSpec: replicas 1,
// selector 2, template 3, minReadySeconds 4; PodTemplateSpec: metadata 1,
// spec 2; PodSpec: containers 2; Container: name 1, image 2) and
// ObjectMeta's managedFields 17. TestFleetReplicaSetDecode checks the
// result against the generated decoder's.
func unmarshalFleetReplicaSet(rs *appsv1.ReplicaSet, b []byte) error {
	return walk(b, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case 1:
			return unmarshalMetaWithoutManagedFields(&rs.ObjectMeta, v)
		case 2:
			return unmarshalSpecWithoutTemplateBody(&rs.Spec, v)
		case 3:
			return rs.Status.Unmarshal(v)
		}
		return nil
	})
}

// unmarshalMetaWithoutManagedFields decodes ObjectMeta from b less its
// managedFields, which every read drops anyway (about half of a
// ReplicaSet's metadata, and the costliest part to decode: a time and a
// JSON blob per entry).
//
// The API server writes fields in number order, so managedFields (17,
// ObjectMeta's highest) come last and the rest is a prefix of b, decoded
// in place; other orders are copied without them.
func unmarshalMetaWithoutManagedFields(m *metav1.ObjectMeta, b []byte) error {
	prefix, tail := -1, true // where the managedFields start; whether only they follow
	for off := 0; off < len(b); {
		num, _, n := protowire.ConsumeField(b[off:])
		if n < 0 {
			return errMalformed(protowire.ParseError(n))
		}
		switch {
		case num == 17 && prefix < 0:
			prefix = off
		case num != 17 && prefix >= 0:
			tail = false
		}
		off += n
	}
	switch {
	case prefix < 0:
		return m.Unmarshal(b)
	case tail:
		return m.Unmarshal(b[:prefix])
	}
	kept := make([]byte, 0, len(b))
	for rest := b; len(rest) > 0; {
		num, _, n := protowire.ConsumeField(rest)
		if num != 17 {
			kept = append(kept, rest[:n]...)
		}
		rest = rest[n:]
	}
	return m.Unmarshal(kept)
}

func unmarshalSpecWithoutTemplateBody(s *appsv1.ReplicaSetSpec, b []byte) error {
	return walk(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == 1 && typ == protowire.VarintType:
			r := int32(x)
			s.Replicas = &r
		case num == 4 && typ == protowire.VarintType:
			s.MinReadySeconds = int32(x)
		case num == 2 && typ == protowire.BytesType:
			s.Selector = new(metav1.LabelSelector)
			return s.Selector.Unmarshal(v)
		case num == 3 && typ == protowire.BytesType:
			return walk(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				switch {
				case num == 1 && typ == protowire.BytesType:
					return s.Template.ObjectMeta.Unmarshal(v)
				case num == 2 && typ == protowire.BytesType:
					return walk(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
						if num != 2 || typ != protowire.BytesType {
							return nil
						}
						var c corev1.Container
						err := walk(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
							switch {
							case num == 1 && typ == protowire.BytesType:
								c.Name = string(v)
							case num == 2 && typ == protowire.BytesType:
								c.Image = string(v)
							}
							return nil
						})
						s.Template.Spec.Containers = append(s.Template.Spec.Containers, c)
						return err
					})
				}
				return nil
			})
		}
		return nil
	})
}

// walk calls f with every field of message b: v is the value of a
// length-delimited field, x that of a varint; fixed-size fields are passed
// with neither.
func walk(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errMalformed(protowire.ParseError(n))
		}
		if num < protowire.MinValidNumber {
			return errMalformed(errors.New("invalid field number"))
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.StartGroupType, protowire.EndGroupType:
			return errMalformed(fmt.Errorf("wire type %d", typ))
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return errMalformed(protowire.ParseError(n))
		}
		b = b[n:]
		if err := f(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}
