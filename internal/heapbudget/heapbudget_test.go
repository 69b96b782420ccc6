package heapbudget

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPlan(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name   string
		c      Config
		mode   Mode
		budget int64
	}{
		{"no cgroup", Config{Budget: 512 * mib, Percent: 200}, Budgeted, 512 * mib},
		{"a large cgroup", Config{Budget: 512 * mib, Percent: 200, Cgroup: 8 << 30}, Budgeted, 512 * mib},
		{"half a 512 MiB cgroup", Config{Budget: 512 * mib, Percent: 200, Cgroup: 512 * mib}, Budgeted, 256 * mib},
		{"a 200 MiB pod: half is under the minimum", Config{Budget: 512 * mib, Percent: 200, Cgroup: 200 * mib}, Proportional, 0},
		{"GOGC set", Config{Budget: 512 * mib, Percent: 200, GOGC: "100"}, UserSet, 0},
		{"GOMEMLIMIT set", Config{Budget: 512 * mib, Percent: 200, GOMEMLIMIT: "1GiB"}, UserSet, 0},
	} {
		mode, b := tc.c.Plan()
		if mode != tc.mode || b != tc.budget {
			t.Errorf("%s: got mode %d budget %d, want %d %d", tc.name, mode, b, tc.mode, tc.budget)
		}
	}
}

func TestParseLimit(t *testing.T) {
	for in, want := range map[string]int64{
		"max\n":                 0,
		"536870912\n":           512 << 20,
		"9223372036854771712\n": 0, // cgroup v1's "no limit", rounded to a page
		"":                      0,
		"garbage":               0,
		"-1":                    0,
	} {
		if got := parseLimit(in); got != want {
			t.Errorf("parseLimit(%q) = %d, want %d", in, got, want)
		}
	}
}

// restore puts the collector back as the test binary had it.
func restore(t *testing.T) {
	t.Cleanup(func() {
		generation.Add(1)
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
}

// gcPercent reads GOGC without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// waitPercent waits for the hook (a finalizer, run after the collection)
// to leave GOGC at want.
func waitPercent(want int) int {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		runtime.GC()
		if p := gcPercent(); p == want {
			return p
		}
		time.Sleep(10 * time.Millisecond)
	}
	return gcPercent()
}

func TestBudgetKeptWhileLiveHeapIsSmall(t *testing.T) {
	restore(t)
	if m := (Config{Budget: Minimum, Percent: 200}).Apply(); m != Budgeted {
		t.Fatalf("mode %d, want Budgeted", m)
	}
	if p := gcPercent(); p != -1 {
		t.Fatalf("GOGC %d right after Apply, want off", p)
	}
	for range 3 {
		runtime.GC()
		time.Sleep(20 * time.Millisecond) // let the finalizer run
	}
	if p := gcPercent(); p != -1 {
		t.Errorf("GOGC %d after collections of a small heap, want still off", p)
	}
	if l := debug.SetMemoryLimit(-1); l != Minimum {
		t.Errorf("memory limit %d, want the budget %d", l, Minimum)
	}
}

func TestBudgetGivesWayToGOGCWhenLiveHeapIsLarge(t *testing.T) {
	restore(t)
	(Config{Budget: Minimum, Percent: 300}).Apply()
	// More than half the budget kept live: the next collection must hand
	// over to GOGC, or every later one would come at the limit again.
	keep := make([][]byte, 0, 80)
	for range 80 {
		keep = append(keep, make([]byte, 1<<20))
	}
	if p := waitPercent(300); p != 300 {
		t.Errorf("GOGC %d with %d MiB live under a %d MiB budget, want 300", p, len(keep), Minimum>>20)
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("memory limit %d after handing over, want none", l)
	}
	runtime.KeepAlive(keep)
}

func TestProportionalSetsPercent(t *testing.T) {
	restore(t)
	if m := (Config{Budget: Minimum, Percent: 250, Cgroup: Minimum}).Apply(); m != Proportional {
		t.Fatalf("mode %d, want Proportional", m)
	}
	if p := gcPercent(); p != 250 {
		t.Errorf("GOGC %d, want 250", p)
	}
}
