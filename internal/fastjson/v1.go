//go:build !goexperiment.jsonv2 || !go1.27

package fastjson

import sigsjson "sigs.k8s.io/json"

// Clean decodes one JSON value into v and reports whether it decoded
// cleanly: field names matched case-sensitively, no key repeated (a caller
// decodes such input another way, which decides what it means). Unknown
// fields are ignored, as a protobuf read ignores them.
func Clean(data []byte, v any) bool {
	strict, err := sigsjson.UnmarshalStrict(data, v, sigsjson.DisallowDuplicateFields)
	return err == nil && len(strict) == 0
}

// CaseSensitive decodes data into v as the API server reads JSON: field
// names matched case-sensitively, unknown fields ignored, a repeated key's
// last value kept, a number that overflows its field an error.
func CaseSensitive(data []byte, v any) error {
	return sigsjson.UnmarshalCaseSensitivePreserveInts(data, v)
}
