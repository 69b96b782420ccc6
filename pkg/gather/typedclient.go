package gather

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/rolloutdoctor/rolloutdoctor/internal/fastjson"
	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// Typed reads the lists that grow with a Rollout's or a fleet's size
// straight into structs: pods and ReplicaSets as protobuf, Rollouts (a CRD
// has no protobuf) as JSON. It is one REST client with the connection's
// rate limit and monitor, not a clientset: the reads are three paths, and
// decoding a pod list item by item lets each pod drop what diagnose never
// reads (managedFields) before the next is decoded, so that a 2,000-pod
// list never holds them all, nor a second copy of the response as
// client-go's envelope decoding makes.
type Typed struct {
	rc rest.Interface
}

// NewTyped makes the typed reader over cfg (its rate limiter and
// transport wrappers are kept).
func NewTyped(cfg *rest.Config) (*Typed, error) {
	c := rest.CopyConfig(cfg)
	c.ContentType = "application/vnd.kubernetes.protobuf"
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	if c.NegotiatedSerializer == nil {
		c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	}
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return &Typed{rc: rc}, nil
}

// protoMagic starts every protobuf-encoded response of the API server
// (k8s.io/apimachinery/pkg/runtime/serializer/protobuf).
var protoMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// message is a protobuf-generated Kubernetes type.
type message[T any] interface {
	*T
	Unmarshal([]byte) error
}

// listPage reads one page of a built-in list at path: as protobuf, items
// decoded one by one, each passed to trim as soon as it is decoded; as
// JSON if the server answers JSON.
func listPage[T any, PT message[T]](ctx context.Context, t *Typed, path string, lo metav1.ListOptions, trim func(PT)) ([]T, string, error) {
	body, err := listRequest(t.rc.Get().AbsPath(path), lo).DoRaw(ctx)
	if err != nil {
		return nil, "", err
	}
	if !bytes.HasPrefix(body, protoMagic) {
		var l struct {
			Metadata metav1.ListMeta `json:"metadata"`
			Items    []T             `json:"items"`
		}
		if err := fastjson.CaseSensitive(body, &l); err != nil {
			return nil, "", fmt.Errorf("decoding %s: %w", path, err)
		}
		for i := range l.Items {
			trim(&l.Items[i])
		}
		return l.Items, l.Metadata.Continue, nil
	}
	items, cont, err := decodeProtoList[T, PT](body[len(protoMagic):], trim)
	if err != nil {
		return nil, "", fmt.Errorf("decoding %s: %w", path, err)
	}
	return items, cont, nil
}

// decodeProtoList decodes a protobuf runtime.Unknown envelope holding a
// list whose field 1 is its ListMeta and field 2 its repeated items, as
// every built-in list type (PodList, ReplicaSetList, …) is laid out,
// without copying the envelope's payload.
func decodeProtoList[T any, PT message[T]](envelope []byte, trim func(PT)) ([]T, string, error) {
	raw, err := field(envelope, 2) // runtime.Unknown.raw
	if err != nil {
		return nil, "", fmt.Errorf("envelope: %w", err)
	}
	// Count the items first, so that they are decoded in place, into one
	// slice of structs as a generated List holds them.
	n, meta := 0, []byte(nil)
	if err := eachField(raw, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			meta = v
		case 2:
			n++
		}
		return nil
	}); err != nil {
		return nil, "", err
	}
	var lm metav1.ListMeta
	if err := lm.Unmarshal(meta); err != nil {
		return nil, "", fmt.Errorf("list metadata: %w", err)
	}
	items := make([]T, 0, n)
	err = eachField(raw, func(num protowire.Number, v []byte) error {
		if num != 2 {
			return nil
		}
		items = append(items, *new(T))
		it := PT(&items[len(items)-1])
		if err := it.Unmarshal(v); err != nil {
			return fmt.Errorf("item %d: %w", len(items)-1, err)
		}
		trim(it)
		return nil
	})
	return items, lm.Continue, err
}

// field returns the bytes of the last occurrence of length-delimited field
// num of message b (protobuf's rule for a non-repeated field), or an error
// if it is absent.
func field(b []byte, num protowire.Number) ([]byte, error) {
	var out []byte
	found := false
	err := eachField(b, func(n protowire.Number, v []byte) error {
		if n == num {
			out, found = v, true
		}
		return nil
	})
	if err == nil && !found {
		err = fmt.Errorf("no field %d", num)
	}
	return out, err
}

// eachField calls f with every length-delimited field of message b, in
// order; other wire types are skipped.
func eachField(b []byte, f func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errMalformed(protowire.ParseError(n))
		}
		b = b[n:]
		if typ != protowire.BytesType {
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return errMalformed(protowire.ParseError(m))
			}
			b = b[m:]
			continue
		}
		v, m := protowire.ConsumeBytes(b)
		if m < 0 {
			return errMalformed(protowire.ParseError(m))
		}
		b = b[m:]
		if err := f(num, v); err != nil {
			return err
		}
	}
	return nil
}

func errMalformed(err error) error { return errors.New("malformed protobuf: " + err.Error()) }

// listAllTyped reads every page of a built-in list at path.
func listAllTyped[T any, PT message[T]](ctx context.Context, t *Typed, path string, lo metav1.ListOptions, trim func(PT), onPage func(int)) ([]T, error) {
	return pages(ctx, lo, func(ctx context.Context, lo metav1.ListOptions) ([]T, string, error) {
		return listPage[T, PT](ctx, t, path, lo, trim)
	}, onPage)
}

// jsonPage reads one page of a list at path as JSON, undecoded.
func (t *Typed) jsonPage(ctx context.Context, path string, lo metav1.ListOptions) ([]byte, error) {
	return listRequest(t.rc.Get().AbsPath(path).SetHeader("Accept", "application/json"), lo).DoRaw(ctx)
}

// listRequest sets the list options gather uses as query parameters.
func listRequest(req *rest.Request, lo metav1.ListOptions) *rest.Request {
	if lo.Limit > 0 {
		req = req.Param("limit", strconv.FormatInt(lo.Limit, 10))
	}
	for k, v := range map[string]string{"labelSelector": lo.LabelSelector, "fieldSelector": lo.FieldSelector, "continue": lo.Continue} {
		if v != "" {
			req = req.Param(k, v)
		}
	}
	return req
}

// nsPath is the path of a built-in resource's list in ns ("" all).
func nsPath(prefix, ns, resource string) string {
	if ns == "" {
		return prefix + "/" + resource
	}
	return prefix + "/namespaces/" + ns + "/" + resource
}
