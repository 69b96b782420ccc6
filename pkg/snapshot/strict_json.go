//go:build !goexperiment.jsonv2 || !go1.27

package snapshot

import sigsjson "sigs.k8s.io/json"

// unmarshalStrict decodes one JSON object into v and reports whether it
// decoded cleanly: field names matched case-sensitively, as the API server
// and the unstructured converter match them; an unknown field or a
// duplicated key declines, so that the map path decides what they mean.
// (Toolchains without json/v2 by default.)
func unmarshalStrict(data []byte, v any) bool {
	strict, err := sigsjson.UnmarshalStrict(data, v, sigsjson.DisallowDuplicateFields)
	return err == nil && len(strict) == 0
}
