package snapshot

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO nobody writes to reads as empty input at once instead of hanging;
// one whose writer stalls fails after the idle timeout.
func TestOpenInputFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "x.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	r, err := OpenInput(fifo)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil || len(b) != 0 {
		t.Fatalf("no writer: read %q, %v; want empty input", b, err)
	}

	defer func(old time.Duration) { InputIdleTimeout = old }(InputIdleTimeout)
	InputIdleTimeout = 200 * time.Millisecond
	r, err = OpenInput(fifo)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // a writer that never writes
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	start := time.Now()
	_, err = io.ReadAll(r)
	if err == nil || !strings.Contains(err.Error(), "no data from") {
		t.Fatalf("stalled writer: err %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("the idle timeout did not bound the read")
	}
}

func TestOpenInputRefusesDirectoriesAndSockets(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenInput(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
	if _, err := OpenInput(filepath.Join(dir, "missing.yaml")); err == nil || !strings.HasPrefix(err.Error(), "cannot open ") {
		t.Errorf("missing: %v", err)
	}
	if NotRegular(dir) == "" {
		t.Error("a directory is not a regular file")
	}
}
