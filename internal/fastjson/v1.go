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
