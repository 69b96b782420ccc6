package gather

import (
	"os"

	"golang.org/x/sys/unix"
)

// stopChildren sends SIGTERM to every process below this one, found in
// the kernel's process table (sysctl kern.proc.all, what ps reads).
func stopChildren() int {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return 0
	}
	parents := make(map[int]int, len(procs))
	for _, p := range procs {
		parents[int(p.Proc.P_pid)] = int(p.Eproc.Ppid)
	}
	pids := below(parents, os.Getpid(), nil)
	for _, pid := range pids {
		unix.Kill(pid, unix.SIGTERM)
	}
	return len(pids)
}
