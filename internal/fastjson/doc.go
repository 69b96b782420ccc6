// Package fastjson decodes the JSON that grows with a snapshot's size (its
// pods) straight into API structs, with the toolchain's encoding/json/v2
// where it is built in and sigs.k8s.io/json otherwise. Both behave alike for
// what the API server and `snapshot` write; `make test` runs the tests with
// either.
//
// A live read does not use it: the fleet's Rollout list stays on
// sigs.k8s.io/json. Decoding it with json/v2 took a tenth less CPU but
// mapped 13 MB more of the binary (json/v2's code, which `diagnose -f`
// runs anyway for the file's other objects and a scan does not).
package fastjson
