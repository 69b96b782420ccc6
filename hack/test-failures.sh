#!/usr/bin/env bash
# hack/test-failures.sh LOG: what failed in a `go test -v` log, and what each
# failing test logged. The e2e suite runs some 300 subtests in parallel and
# prints tens of thousands of lines; a CI report that keeps only the tail
# would otherwise end in a wall of PASS lines and hide the one that failed.
# Printed last so that the tail of the run is the failure itself.
set -euo pipefail
log="${1:?usage: hack/test-failures.sh LOG}"
awk '
	# A -v log interleaves parallel tests: each "=== RUN|CONT|NAME|PAUSE name"
	# line says whose output follows, up to the next "===" or "---" line.
	function owner_of(line) { sub(/^=== (RUN|CONT|NAME|PAUSE) +/, "", line); return line }
	# A panic or the -timeout alarm ends the binary: keep its first lines.
	/^panic: / && panicked == 0 { panicked = 1 }
	panicked > 0 && panicked <= 60 { panic_lines = panic_lines $0 "\n"; panicked++ }
	/^=== (RUN|CONT|NAME|PAUSE) / { current = owner_of($0); next }
	/^ *--- (PASS|FAIL|SKIP): / {
		if ($0 ~ /--- FAIL: /) {
			name = $0; sub(/^ *--- FAIL: /, "", name); sub(/ \([0-9.]+s\)$/, "", name)
			failed[++n] = name
		}
		current = ""
		next
	}
	/^(PASS|FAIL|ok )/ { current = ""; next }
	current != "" { lines[current] = lines[current] $0 "\n"; count[current]++ }
	END {
		if (panic_lines != "") printf "\n=== the test binary panicked\n%s", panic_lines
		if (n == 0) { if (panic_lines == "") print "test-failures: no failing test in the log"; exit }
		# A parent fails because a child did: print the leaves, whose output
		# says why, and the parents only when they logged something themselves.
		for (i = 1; i <= n; i++) {
			leaf = 1
			for (j = 1; j <= n; j++) if (index(failed[j], failed[i] "/") == 1) leaf = 0
			if (!leaf && count[failed[i]] == 0) continue
			c = count[failed[i]]
			printf "\n=== what %s logged (%d lines%s)\n", failed[i], c, (c > 120 ? ", the last 120 shown" : "")
			k = split(lines[failed[i]], l, "\n")
			for (m = (k > 121 ? k - 120 : 1); m < k; m++) print l[m]
		}
		printf "\nfailing tests (%d):\n", n
		for (i = 1; i <= n; i++) print "  " failed[i]
	}
' "$log"
