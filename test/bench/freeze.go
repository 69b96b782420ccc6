package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// freezeLab stops (SIGSTOP) every process the lab started, as listed in
// its state directory's pids/, and returns what resumes them (SIGCONT, in
// the order the lab starts them: etcd first).
//
// A cluster elsewhere runs its etcd, API server, kubelets and controllers
// on machines of its own. The lab runs them all here, and with a fleet of
// 1,000 Rollouts and 22,000 kwok pods they took 8.3 s of CPU a minute at
// rest (2026-12-02; the API server 4.4 s, the controller-manager 2 s, etcd
// 1.2 s), in bursts, on the cores the runs are measured on. A case that
// claims its clusters are elsewhere measures its runs with them stopped,
// the remotes answering from what they recorded; a request they did not
// record fails the run (remote.frozen) instead of waiting for a stopped
// API server. The lab runs without leader election (test/lab/up.sh,
// controller.sh), so a controller that was stopped for seconds resumes as
// it was; the stop is kept short (one case's runs) so that no node lease
// outlives the node controller's grace period.
func freezeLab(stateDir string) (thaw func(), err error) {
	files, err := filepath.Glob(filepath.Join(stateDir, "pids", "*.pid"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no lab processes in %s/pids", stateDir)
	}
	// etcd, then the API servers, then what talks to them.
	rank := func(name string) int {
		switch {
		case name == "etcd":
			return 0
		case strings.HasPrefix(name, "kube-apiserver"):
			return 1
		}
		return 2
	}
	type proc struct {
		name string
		pid  int
	}
	var procs []proc
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // stopped since it was listed
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 1 {
			return nil, fmt.Errorf("%s: not a PID: %q", f, b)
		}
		procs = append(procs, proc{strings.TrimSuffix(filepath.Base(f), ".pid"), pid})
	}
	sort.SliceStable(procs, func(i, j int) bool { return rank(procs[i].name) < rank(procs[j].name) })
	// Stopped clients first and etcd last; resumed the other way round.
	var stopped []proc
	thaw = func() {
		for i := len(stopped) - 1; i >= 0; i-- {
			syscall.Kill(stopped[i].pid, syscall.SIGCONT)
		}
	}
	for i := len(procs) - 1; i >= 0; i-- {
		p := procs[i]
		if err := syscall.Kill(p.pid, syscall.SIGSTOP); err != nil {
			if err == syscall.ESRCH {
				continue // exited
			}
			thaw()
			return nil, fmt.Errorf("stopping %s (pid %d): %w", p.name, p.pid, err)
		}
		stopped = append(stopped, p)
	}
	return thaw, nil
}
