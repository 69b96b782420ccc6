package gather

import (
	"slices"
	"sync/atomic"
	"time"
)

// abandoned is set when a request gave up on a credential plugin that was
// still running (see monitorTransport.send).
var abandoned atomic.Bool

// StopAbandonedPlugins ends the credential plugins this process gave up
// on, as it exits. client-go starts them without a deadline and keeps no
// handle a caller could stop them with; left running, a plugin that waits
// for a login keeps its browser flow or local port open and holds this
// process's stderr, so that `… | tee` waits for it. At exit every request
// has ended, so a process still running below this one is such a plugin,
// or a process it started (a plugin that is a wrapper script runs the real
// one as its child, which would otherwise outlive it holding the same
// stderr): each is stopped, as Ctrl-C would have stopped it. Where the
// process table can be read: Linux (/proc), macOS (sysctl) and Windows
// (a process snapshot); elsewhere the plugin finishes on its own.
func StopAbandonedPlugins() {
	if abandoned.Load() {
		stopChildren()
	}
}

// StopGivenUpPlugins ends, mid-process, the credential plugin runs given
// up on (as StopAbandonedPlugins does at exit) and waits up to wait for
// them to be gone. A scan calls it when no read is left, before it gives
// a plugin the terminal: a run still waiting from the first read (for a
// browser's callback on its local port, a device code) would otherwise
// go on beside the one on the terminal — two runs of one login, the
// first one's code no longer the one that counts, its port taken.
func StopGivenUpPlugins(wait time.Duration) {
	if !abandoned.Load() {
		return
	}
	deadline := time.Now().Add(wait)
	for stopChildren() > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
}

// below lists the processes under root, children before grandchildren,
// from each process's parent. sameLine, when not nil, confirms that child
// was started by parent and not by an earlier process whose pid parent
// now has (Windows keeps a process's parent pid after the parent ends,
// and reuses pids); a child it rejects is left with its descendants.
func below(parent map[int]int, root int, sameLine func(child, parent int) bool) []int {
	children := map[int][]int{}
	for pid, pp := range parent {
		if pid != pp {
			children[pp] = append(children[pp], pid)
		}
	}
	var out []int
	next := []int{root}
	seen := map[int]bool{root: true}
	for len(next) > 0 {
		p := next[0]
		next = next[1:]
		kids := children[p]
		slices.Sort(kids)
		for _, c := range kids {
			if seen[c] || sameLine != nil && !sameLine(c, p) {
				continue
			}
			seen[c] = true
			out = append(out, c)
			next = append(next, c)
		}
	}
	return out
}
