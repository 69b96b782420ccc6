package gather

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// stopChildren sends SIGTERM to every process below this one, and says
// how many there were.
func stopChildren() int {
	pids := below(processParents(), os.Getpid(), nil)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	return len(pids)
}

// processParents reads each process's parent from /proc.
func processParents() map[int]int {
	parents := map[int]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // it ended meanwhile
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if ppid, ok := parentOf(string(b)); ok && err == nil {
			parents[pid] = ppid
		}
	}
	return parents
}

// parentOf reads the parent pid from a /proc/PID/stat line: "pid (comm)
// state ppid …", where comm may itself contain spaces and parentheses.
func parentOf(stat string) (int, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}
