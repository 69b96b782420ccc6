//go:build !goexperiment.jsonv2 || !go1.27

package fastjson

// Without json/v2 in the toolchain, sigs.k8s.io/json decodes.
var (
	best     = sigs
	decoders = map[string]decoder{"sigs.k8s.io/json": sigs}
)
