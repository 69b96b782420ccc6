package gather

import (
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// stopChildren ends every process below this one, found in a snapshot of
// the process table. Windows has no SIGTERM to send a console program
// that is not attached to this console's group: TerminateProcess it is,
// which is what closing the terminal would do.
func stopChildren() int {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return 0
	}
	defer windows.CloseHandle(snap)
	parents := map[int]int{}
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	for err := windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		parents[int(e.ProcessID)] = int(e.ParentProcessID)
	}
	pids := below(parents, os.Getpid(), startedAfter)
	for _, pid := range pids {
		h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(pid))
		if err != nil {
			continue
		}
		windows.TerminateProcess(h, 1)
		windows.CloseHandle(h)
	}
	return len(pids)
}

// startedAfter is true when child started after parent did, as a process
// that parent started must have: Windows keeps a parent pid after that
// parent ends, and may give the pid to a new process.
func startedAfter(child, parent int) bool {
	c, ok1 := started(child)
	p, ok2 := started(parent)
	return ok1 && ok2 && c >= p
}

func started(pid int) (int64, bool) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return 0, false
	}
	defer windows.CloseHandle(h)
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return 0, false
	}
	return created.Nanoseconds(), true
}
