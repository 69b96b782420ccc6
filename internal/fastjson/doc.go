// Package fastjson decodes the JSON that grows with the input — a
// snapshot's pods, a fleet's Rollouts — straight into API structs, with the
// toolchain's encoding/json/v2 where it is built in and sigs.k8s.io/json
// otherwise. Both behave alike for what the API server and `snapshot`
// write, and the tests run both on every input (a toolchain without json/v2
// has only sigs.k8s.io/json).
//
// json/v2 decodes with about 40% less CPU. For a scan that costs memory:
// its code is 13 MB more of the binary mapped (a `diagnose -f` runs it
// anyway for the file's other objects), which is worth a tenth of the CPU
// of a scan over several clusters at once.
package fastjson
