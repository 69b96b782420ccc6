package gather

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// At exit the plugins given up on are stopped: every process still
// running below this one, the child of a plugin that is a wrapper script
// included (it would otherwise outlive the script, holding its stderr).
func TestStopChildren(t *testing.T) {
	plugin := exec.Command("sleep", "30")
	wrapper := exec.Command("sh", "-c", "sleep 31 & echo $!; wait")
	out, err := wrapper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*exec.Cmd{plugin, wrapper} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	grandchild, err2 := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || err2 != nil {
		t.Fatalf("the wrapper's child: %q %v %v", line, err, err2)
	}
	done := make(chan error, 2)
	for _, c := range []*exec.Cmd{plugin, wrapper} {
		go func() { done <- c.Wait() }()
	}
	stopChildren()
	for range 2 {
		select {
		case err := <-done:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
				t.Errorf("a child ended with %v, want SIGTERM", err)
			}
		case <-time.After(5 * time.Second):
			plugin.Process.Kill()
			wrapper.Process.Kill()
			syscall.Kill(grandchild, syscall.SIGKILL)
			t.Fatal("a child was not stopped")
		}
	}
	// The wrapper's child, orphaned by now, ended too (or is a zombie
	// waiting for whoever adopted it to reap it).
	deadline := time.Now().Add(5 * time.Second)
	for running(grandchild) {
		if time.Now().After(deadline) {
			syscall.Kill(grandchild, syscall.SIGKILL)
			t.Fatal("the wrapper's child was not stopped")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for stat, want := range map[string]int{
		"4242 (sleep) S 77 4242 77 0 -1": 77,
		"4243 (a (b) c) R 91 1 1 0":      91,
	} {
		if got, ok := parentOf(stat); !ok || got != want {
			t.Errorf("parentOf(%q) = %d, %v; want %d", stat, got, ok, want)
		}
	}
}

// running is true while pid is a process that has not ended (a zombie
// has).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

// A scan about to give a credential plugin the terminal again stops the
// run it gave up on first: two runs of one login would each wait (two
// device codes, one browser callback port).
func TestStopGivenUpPlugins(t *testing.T) {
	server, _ := pluginServer(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	conn, _ := pluginConnection(t, server, "echo $$ > "+pidFile+"\nexec sleep 30", "", "", "600ms")
	t.Cleanup(StopAbandonedPlugins)
	o := conn.Options
	o.Namespace, o.Name, o.SkipController = "shop", "x", true
	if _, err := Rollout(context.Background(), conn.Dynamic, o); err == nil {
		t.Fatal("the read did not give up on the plugin")
	}
	b, err := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid == 0 || syscall.Kill(pid, 0) != nil {
		t.Fatalf("the plugin does not run (pid %q: %v)", b, err)
	}
	StopGivenUpPlugins(5 * time.Second)
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("the run given up on (pid %d) still runs after StopGivenUpPlugins", pid)
	}
}
