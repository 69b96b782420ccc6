#!/usr/bin/env bash
# hack/fuzz.sh [SECONDS]: run every fuzzer for a short time (default 15 s
# each), as CI does. Minimization is capped: the seeds are whole snapshots,
# and minimizing one of them takes minutes at the default setting.
set -euo pipefail
cd "$(dirname "$0")/.."
t="${1:-${FUZZTIME:-15}}"
for target in \
	"./pkg/diagnose FuzzDiagnoseFile" \
	"./pkg/escape FuzzBuild" \
	"./pkg/lint FuzzLint" \
	"./pkg/model FuzzEvaluate" \
	"./pkg/timeline FuzzRecord" \
	"./pkg/snapshot FuzzSplitJSONList" \
	"./internal/fastjson FuzzFleetPodSpec"; do
	set -- $target
	echo "fuzz: $2 for ${t}s"
	go test -run '^$' -fuzz "^$2\$" -fuzztime "${t}s" -fuzzminimizetime 5x "$1"
done
