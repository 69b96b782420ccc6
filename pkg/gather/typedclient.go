package gather

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/internal/fastjson"
	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// Typed reads the lists that grow with a Rollout's or a fleet's size
// straight into structs: pods and ReplicaSets as protobuf, Rollouts (a CRD
// has no protobuf) as JSON. It is one REST client with the connection's
// rate limit and monitor, not a clientset: the reads are three paths, and
// decoding a pod list item by item, as it arrives, lets each pod drop what
// diagnose never reads (managedFields) before the next is decoded, so that
// a 2,000-pod list never holds them all, nor the response whole, nor a
// second copy of it as client-go's envelope decoding makes.
type Typed struct {
	rc rest.Interface
	// m is the connection's monitor (nil outside Connect), which keeps
	// what net/http's Client.Timeout may flatten (see monitor.restore).
	m *monitor
}

// NewTyped makes the typed reader over cfg (its rate limiter and
// transport wrappers are kept).
func NewTyped(cfg *rest.Config) (*Typed, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return newTyped(cfg, hc)
}

// newTyped is NewTyped over an HTTP client that is already made.
func newTyped(cfg *rest.Config, hc *http.Client) (*Typed, error) {
	c := rest.CopyConfig(cfg)
	c.ContentType = "application/vnd.kubernetes.protobuf"
	c.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	if c.NegotiatedSerializer == nil {
		c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	}
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.UnversionedRESTClientForConfigAndClient(c, hc)
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
// decoded one by one while the response arrives, each passed to trim as
// soon as it is decoded; as JSON if the server answers JSON.
// unmarshal, when set, decodes a protobuf item in place of its generated
// Unmarshal.
func listPage[T any, PT message[T]](ctx context.Context, t *Typed, path string, lo metav1.ListOptions, unmarshal func(PT, []byte) error, trim func(PT)) ([]*T, string, error) {
	body, err := getStream(ctx, listRequest(t.rc.Get().AbsPath(path), lo))
	if err != nil {
		return nil, "", err
	}
	defer body.Close()
	rd := &reading{r: body}
	br := bufio.NewReaderSize(rd, 64<<10)
	if head, _ := br.Peek(len(protoMagic)); !bytes.Equal(head, protoMagic) {
		items, cont, err := decodeJSONList[T](br, fastjson.CaseSensitiveRead)
		if err != nil {
			return nil, "", rd.failed(path, err)
		}
		for _, it := range items {
			trim(it)
		}
		return items, cont, nil
	}
	_, _ = br.Discard(len(protoMagic))
	items, cont, err := decodeProtoList(br, unmarshal, trim)
	if err != nil {
		return nil, "", rd.failed(path, err)
	}
	return items, cont, nil
}

// getStream sends the GET req and returns the response body to read. Like
// client-go's DoRaw for a GET (and unlike its Stream), it tries again, up
// to three times a second apart, when the connection was reset or lost
// before an answer came: an API server shutting down behind its load
// balancer. Other failures, and an interrupted read, are not retried.
func getStream(ctx context.Context, req *rest.Request) (io.ReadCloser, error) {
	for attempt := 1; ; attempt++ {
		body, err := req.Stream(ctx)
		if err == nil || attempt == 3 || !(utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err)) {
			return body, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(retryWait):
		}
	}
}

// retryWait is getStream's pause between attempts (a test shortens it).
var retryWait = time.Second

// reading keeps the error of a response body's reads, so that a body cut
// off by the network is reported as such, not as malformed.
type reading struct {
	r   io.Reader
	err error
}

func (r *reading) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

// failed words a failed decode of what (a list).
func (r *reading) failed(what string, err error) error {
	if r.err != nil {
		return fmt.Errorf("reading %s: %w", what, r.err)
	}
	return fmt.Errorf("decoding %s: %w", what, err)
}

// maxItem bounds one list item's protobuf length: etcd keeps objects of at
// most 1.5 MiB by default, and a length beyond this is a broken response,
// not a reason to allocate it.
const maxItem = 64 << 20

// decodeProtoList decodes a protobuf runtime.Unknown envelope (after the
// magic) holding a list whose field 1 is its ListMeta and field 2 its
// repeated items, as every built-in list type (PodList, ReplicaSetList, …)
// is laid out. It reads r as the bytes arrive, one item at a time into one
// reused buffer (the generated decoders copy what they keep), so neither
// the response nor a second copy of it is ever held whole. Items are
// allocated in blocks, never moved: a slice of structs grown by append
// copied every ReplicaSet of a fleet about twice.
func decodeProtoList[T any, PT message[T]](r *bufio.Reader, unmarshal func(PT, []byte) error, trim func(PT)) ([]*T, string, error) {
	if unmarshal == nil {
		unmarshal = PT.Unmarshal
	}
	w := &wireReader{r: r}
	var items []*T
	var block []T
	var lm metav1.ListMeta
	found := false
	for {
		num, typ, err := w.tag()
		if err == io.EOF {
			break // between fields: the envelope is complete
		}
		if err != nil {
			return nil, "", err
		}
		if num != 2 || typ != protowire.BytesType { // not runtime.Unknown.raw
			if err := w.skip(typ); err != nil {
				return nil, "", err
			}
			continue
		}
		n, err := w.uvarint()
		if err != nil {
			return nil, "", unexpected(err)
		}
		// A repeated raw field replaces the earlier one, as protobuf keeps
		// the last occurrence of a non-repeated field.
		found, items, lm = true, nil, metav1.ListMeta{}
		end := w.off + n
		for w.off < end {
			num, typ, err := w.tag()
			if err != nil {
				return nil, "", unexpected(err)
			}
			if typ != protowire.BytesType || (num != 1 && num != 2) {
				if err := w.skip(typ); err != nil {
					return nil, "", err
				}
				continue
			}
			v, err := w.bytes(min(end-w.off, maxItem))
			if err != nil {
				return nil, "", err
			}
			if num == 1 {
				if err := lm.Unmarshal(v); err != nil {
					return nil, "", fmt.Errorf("list metadata: %w", err)
				}
				continue
			}
			if len(block) == cap(block) {
				block = make([]T, 0, min(max(len(items), 16), 256))
			}
			block = append(block, *new(T))
			it := PT(&block[len(block)-1])
			items = append(items, (*T)(it))
			if err := unmarshal(it, v); err != nil {
				return nil, "", fmt.Errorf("item %d: %w", len(items)-1, err)
			}
			trim(it)
		}
		if w.off != end {
			return nil, "", errMalformed(errors.New("a field overruns the list"))
		}
	}
	if !found {
		return nil, "", errors.New("envelope: no field 2")
	}
	return items, lm.Continue, nil
}

// wireReader reads protobuf's wire format from a stream, counting the
// bytes read so that a length-delimited field's end is known.
type wireReader struct {
	r   *bufio.Reader
	off uint64
	buf []byte
}

func (w *wireReader) ReadByte() (byte, error) {
	b, err := w.r.ReadByte()
	if err == nil {
		w.off++
	}
	return b, err
}

// uvarint reads a varint: io.EOF if the stream ends before it.
func (w *wireReader) uvarint() (uint64, error) {
	v, err := binary.ReadUvarint(w)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return 0, errMalformed(err) // longer than ten bytes
	}
	return v, err
}

// tag reads a field's tag: io.EOF if the stream ends before it.
func (w *wireReader) tag() (protowire.Number, protowire.Type, error) {
	v, err := w.uvarint()
	if err != nil {
		return 0, 0, err
	}
	num, typ := protowire.DecodeTag(v)
	if num < protowire.MinValidNumber {
		return 0, 0, errMalformed(errors.New("invalid field number"))
	}
	return num, typ, nil
}

// skip reads past a field's value of wire type typ.
func (w *wireReader) skip(typ protowire.Type) error {
	var n uint64
	switch typ {
	case protowire.VarintType:
		_, err := w.uvarint()
		return unexpected(err)
	case protowire.Fixed32Type:
		n = 4
	case protowire.Fixed64Type:
		n = 8
	case protowire.BytesType:
		var err error
		if n, err = w.uvarint(); err != nil {
			return unexpected(err)
		}
	default: // groups: no Kubernetes type has them
		return errMalformed(fmt.Errorf("wire type %d", typ))
	}
	for n > 0 {
		d, err := w.r.Discard(int(min(n, 1<<20)))
		w.off += uint64(d)
		n -= uint64(d)
		if err != nil {
			return unexpected(err)
		}
	}
	return nil
}

// bytes reads a length-delimited value of at most max bytes into the
// reused buffer: valid until the next call.
func (w *wireReader) bytes(max uint64) ([]byte, error) {
	n, err := w.uvarint()
	if err != nil {
		return nil, unexpected(err)
	}
	if n > max {
		return nil, errMalformed(fmt.Errorf("a field of %d bytes where at most %d can be", n, max))
	}
	if uint64(cap(w.buf)) < n {
		w.buf = make([]byte, n)
	}
	v := w.buf[:n]
	if _, err := io.ReadFull(w.r, v); err != nil {
		return nil, unexpected(err)
	}
	w.off += n
	return v, nil
}

// unexpected makes the end of the stream inside a field an error.
func unexpected(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errMalformed(io.ErrUnexpectedEOF)
	}
	return err
}

func errMalformed(err error) error { return errors.New("malformed protobuf: " + err.Error()) }

// listAllTyped reads every page of a built-in list at path.
func listAllTyped[T any, PT message[T]](ctx context.Context, t *Typed, path string, lo metav1.ListOptions, unmarshal func(PT, []byte) error, trim func(PT), onPage func(int)) ([]*T, error) {
	return pages(ctx, lo, func(ctx context.Context, lo metav1.ListOptions) ([]*T, string, error) {
		return listPage(ctx, t, path, lo, unmarshal, trim)
	}, onPage)
}

// jsonListPage reads one page of a list at path as JSON, decoding it
// while it arrives; what names the list in errors. Its items may come
// without managedFields: the fleet's Rollouts are its one use, and
// fromTyped drops them.
func jsonListPage[T any](ctx context.Context, t *Typed, path, what string, lo metav1.ListOptions) ([]*T, string, error) {
	body, err := getStream(ctx, listRequest(t.rc.Get().AbsPath(path).SetHeader("Accept", "application/json"), lo))
	if err != nil {
		return nil, "", err
	}
	defer body.Close()
	rd := &reading{r: body}
	items, cont, err := decodeJSONList[T](rd, fastjson.CaseSensitiveReadFleet)
	if err != nil {
		return nil, "", rd.failed(what, err)
	}
	return items, cont, nil
}

// decodeJSONList decodes a JSON list from r with read (a fastjson reader,
// which decodes as the API server reads JSON: case-sensitive, a number
// that overflows its field an error): its items, null ones left out, and
// its continue token. Items are decoded by pointer: a slice of structs
// grown while decoding copied each about twice.
func decodeJSONList[T any](r io.Reader, read func(io.Reader, any) error) ([]*T, string, error) {
	var l struct {
		Metadata metav1.ListMeta `json:"metadata"`
		Items    []*T            `json:"items"`
	}
	if err := read(r, &l); err != nil {
		return nil, "", err
	}
	items := l.Items[:0]
	for _, it := range l.Items {
		if it != nil {
			items = append(items, it)
		}
	}
	return items, l.Metadata.Continue, nil
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
