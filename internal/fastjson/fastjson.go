package fastjson

import (
	"io"

	sigsjson "sigs.k8s.io/json"
)

// decoder is one implementation of the package's two decodings.
type decoder struct {
	clean         func(data []byte, v any) bool
	caseSensitive func(data []byte, v any) error
	// caseSensitiveRead is caseSensitive over a stream, decoding as the
	// bytes arrive where the decoder can.
	caseSensitiveRead func(r io.Reader, v any) error
	// caseSensitiveReadFleet is caseSensitiveRead that may leave out what
	// a fleet scan does not read (see CaseSensitiveReadFleet).
	caseSensitiveReadFleet func(r io.Reader, v any) error
}

// sigs is sigs.k8s.io/json, which every toolchain builds.
var sigs = decoder{
	clean: func(data []byte, v any) bool {
		strict, err := sigsjson.UnmarshalStrict(data, v, sigsjson.DisallowDuplicateFields)
		return err == nil && len(strict) == 0
	},
	caseSensitive:     sigsjson.UnmarshalCaseSensitivePreserveInts,
	caseSensitiveRead: sigsRead,
	// It has no way to skip a field: it decodes them.
	caseSensitiveReadFleet: sigsRead,
}

// sigsRead is sigs.k8s.io/json over a stream. It validates the whole
// input before decoding: read it all first.
func sigsRead(r io.Reader, v any) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	return sigsjson.UnmarshalCaseSensitivePreserveInts(data, v)
}

// Clean decodes one JSON value into v and reports whether it decoded
// cleanly: field names matched case-sensitively, no key repeated (a caller
// decodes such input another way, which decides what it means). Unknown
// fields are ignored, as a protobuf read ignores them.
func Clean(data []byte, v any) bool { return best.clean(data, v) }

// CaseSensitive decodes data into v as the API server reads JSON: field
// names matched case-sensitively, unknown fields ignored, a repeated key's
// last value kept, a number that overflows its field an error.
func CaseSensitive(data []byte, v any) error { return best.caseSensitive(data, v) }

// CaseSensitiveRead is CaseSensitive reading r to its end. With json/v2 it
// decodes while the response arrives, with no copy of the whole body: a
// fleet's Rollout list is megabytes, and reading it into one growing slice
// first cost as much CPU as a tenth of decoding it.
func CaseSensitiveRead(r io.Reader, v any) error { return best.caseSensitiveRead(r, v) }

// CaseSensitiveReadFleet is CaseSensitiveRead for a fleet scan's Rollouts,
// which drops every object's metadata.managedFields, has no use for the
// annotation kubectl.kubernetes.io/last-applied-configuration, and reads
// of a pod spec (a Rollout's template, an experiment step's) only its
// containers' names and images: with json/v2 the rest is skipped, not
// decoded, though still checked to be JSON. Each managedFields entry is a
// FieldsV1 copied as raw JSON and a time; the annotation, which kubectl
// apply and Argo CD's default sync write, is the whole manifest as an
// escaped string; a production pod spec (env, probes, resources, volumes,
// affinity) is most of a Rollout and most of its decoding's allocations.
// Other decoders may still fill them.
func CaseSensitiveReadFleet(r io.Reader, v any) error { return best.caseSensitiveReadFleet(r, v) }
