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
	// caseSensitiveReadLean is caseSensitiveRead that may leave out
	// every object's managedFields and last-applied-configuration
	// annotation.
	caseSensitiveReadLean func(r io.Reader, v any) error
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
	caseSensitiveReadLean: sigsRead,
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

// CaseSensitiveReadLean is CaseSensitiveRead for a caller that drops every
// object's metadata.managedFields and has no use for the annotation
// kubectl.kubernetes.io/last-applied-configuration: with json/v2 both are
// skipped, not decoded (each managedFields entry is a FieldsV1 copied as
// raw JSON and a time; the annotation, which kubectl apply and Argo CD's
// default sync write, is the whole manifest as an escaped string). Other
// decoders may still fill them.
func CaseSensitiveReadLean(r io.Reader, v any) error { return best.caseSensitiveReadLean(r, v) }
