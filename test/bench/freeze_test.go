package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// procState is the state letter of /proc/PID/stat (T: stopped).
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0]
}

// waitState waits up to 5 s for pid to reach (or, with not, leave) state.
func waitState(t *testing.T, pid int, state string, not bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if (procState(t, pid) == state) != not {
			return
		}
	}
	t.Fatalf("pid %d: state %s after 5 s", pid, procState(t, pid))
}

// freezeLab stops every process its pids/ lists, and thaw resumes them all;
// a PID file of a process that has exited is passed over.
func TestFreezeLabStopsAndResumes(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "pids"), 0o755)
	var pids []int
	for _, name := range []string{"etcd", "kube-apiserver", "kwok"} {
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		pids = append(pids, cmd.Process.Pid)
		os.WriteFile(filepath.Join(dir, "pids", name+".pid"), []byte(fmt.Sprintf("%d\n", cmd.Process.Pid)), 0o644)
	}
	// A PID no process can have (the kernel's pid_max is the bound), not
	// one of an exited process, which the kernel may give to another.
	pidMax, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Fatal(err)
	}
	var gone int
	fmt.Sscan(string(pidMax), &gone)
	os.WriteFile(filepath.Join(dir, "pids", "kube-scheduler.pid"), []byte(fmt.Sprint(gone+1)), 0o644)

	thaw, err := freezeLab(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		waitState(t, pid, "T", false)
	}
	thaw()
	for _, pid := range pids {
		waitState(t, pid, "T", true)
	}
}

func TestFreezeLabWithoutProcessesFails(t *testing.T) {
	if _, err := freezeLab(t.TempDir()); err == nil {
		t.Fatal("no PID files: want an error")
	}
}
