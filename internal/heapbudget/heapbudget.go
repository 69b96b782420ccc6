// Package heapbudget lets a short command leave its garbage uncollected
// until the heap reaches a budget, and collect in proportion to the live
// heap after that.
//
// A scan reads thousands of Rollouts from several clusters at once and
// exits: most of what it allocates is garbage within a second, and every
// collection before the end marks again the fleet it keeps. On two cores
// busy decoding three clusters, that marking is time taken from the
// decoding. The Go runtime has the two halves (GOGC=off with a memory
// limit, and GOGC) but not the switch between them: with GOGC off alone, a
// live heap near the limit would be collected over and over (up to half the
// CPU, by the runtime's own cap). So after each collection under the
// budget, the live heap is looked at, and once it is more than half the
// budget the collector goes back to GOGC.
package heapbudget

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
)

// generation is bumped by each Apply, so that an earlier Apply's hook
// stops (only tests apply twice).
var generation atomic.Int64

// Minimum is the smallest budget worth having: below it the collector runs
// at the given GOGC from the start.
const Minimum = 128 << 20

// Config is what Apply decides from.
type Config struct {
	// Budget is the heap (with the runtime's other memory) under which
	// nothing is collected.
	Budget int64
	// Percent is the GOGC used from the start when the budget is too
	// small, and once the live heap is more than half the budget.
	Percent int
	// Cgroup is the memory limit of the process's cgroup, 0 when it has
	// none: the budget is at most half of it, so that a scheduled scan in
	// a small pod is collected before it is killed.
	Cgroup int64
	// GOGC and GOMEMLIMIT are the environment variables as the user set
	// them: either one set leaves the collector as the user asked.
	GOGC, GOMEMLIMIT string
}

// FromEnvironment fills Cgroup, GOGC and GOMEMLIMIT from the process's
// environment.
func FromEnvironment(budget int64, percent int) Config {
	return Config{Budget: budget, Percent: percent, Cgroup: cgroupLimit(),
		GOGC: os.Getenv("GOGC"), GOMEMLIMIT: os.Getenv("GOMEMLIMIT")}
}

// Mode is what Apply did.
type Mode int

const (
	// UserSet: GOGC or GOMEMLIMIT was set, nothing changed.
	UserSet Mode = iota
	// Proportional: the budget was too small, GOGC is Percent.
	Proportional
	// Budgeted: nothing is collected below the budget.
	Budgeted
)

// Plan returns the mode and the budget the config leads to, without
// changing anything.
func (c Config) Plan() (Mode, int64) {
	if c.GOGC != "" || c.GOMEMLIMIT != "" {
		return UserSet, 0
	}
	b := c.Budget
	if c.Cgroup > 0 {
		b = min(b, c.Cgroup/2)
	}
	if b < Minimum {
		return Proportional, 0
	}
	return Budgeted, b
}

// Apply sets the collector as Plan says. In Budgeted mode a hook looks at
// the live heap after each collection and sets GOGC to Percent (and lifts
// the limit) once it is more than half the budget.
func (c Config) Apply() Mode {
	mode, b := c.Plan()
	gen := generation.Add(1)
	switch mode {
	case Proportional:
		debug.SetGCPercent(c.Percent)
	case Budgeted:
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(b)
		afterEachGC(func() bool {
			if generation.Load() != gen {
				return false
			}
			if liveHeap() <= uint64(b/2) {
				return true
			}
			debug.SetGCPercent(c.Percent)
			debug.SetMemoryLimit(math.MaxInt64)
			return false
		})
	}
	return mode
}

// afterEachGC calls f after every collection for as long as it returns
// true. A finalizer on an object nothing refers to runs after the
// collection that found it unreachable; re-arming it from the finalizer
// makes one per cycle.
func afterEachGC(f func() bool) {
	type sentinel struct{ _ [32]byte } // an object of its own: the tiny allocator packs objects under 16 bytes together
	var arm func()
	arm = func() {
		runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
			if f() {
				arm()
			}
		})
	}
	arm()
}

// liveHeap is the heap the last collection marked live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return math.MaxUint64 // unknown: the safe side is GOGC
	}
	return s[0].Value.Uint64()
}

// cgroupLimit is the memory limit of the cgroup the process sees at
// /sys/fs/cgroup (v2's memory.max, v1's memory.limit_in_bytes), 0 when
// there is none or it cannot be read. In a container that is the
// container's own.
func cgroupLimit() int64 {
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		return parseLimit(string(b))
	}
	return 0
}

// parseLimit reads a cgroup memory limit: "max" (v2) and v1's page-rounded
// maximum mean none.
func parseLimit(s string) int64 {
	s = strings.TrimSpace(s)
	n, err := strconv.ParseInt(s, 10, 64)
	if s == "max" || err != nil || n <= 0 || n >= math.MaxInt64/2 {
		return 0
	}
	return n
}
