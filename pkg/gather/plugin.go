package gather

import "sync/atomic"

// abandoned is set when a request gave up on a credential plugin that was
// still running (see monitorTransport.send).
var abandoned atomic.Bool

// StopAbandonedPlugins ends the credential plugins this process gave up
// on, as it exits. client-go starts them without a deadline and keeps no
// handle a caller could stop them with; left running, a plugin that waits
// for a login keeps its browser flow or local port open and holds this
// process's stderr, so that `… | tee` waits for it. At exit every request
// has ended, so a child process still running is such a plugin: each gets
// SIGTERM, as Ctrl-C would have given it. Only where the process table
// can be read (Linux /proc); elsewhere the plugin finishes on its own.
func StopAbandonedPlugins() {
	if abandoned.Load() {
		stopChildren()
	}
}
