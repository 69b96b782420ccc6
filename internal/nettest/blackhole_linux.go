package nettest

import (
	"errors"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// Blackhole is the https:// URL of a 127.0.0.1 port where an attempt to
// connect is never answered, as at a private endpoint without its VPN or
// behind a firewall that drops packets (a refused port answers at once):
// a listening socket with a backlog of zero whose one queued connection
// is never accepted, so the kernel drops every further SYN. Linux only;
// elsewhere the test is skipped.
func Blackhole(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "blackhole")
	t.Cleanup(func() { f.Close() })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}).String()
	// Fill the accept queue until an attempt goes unanswered.
	for range 8 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		var ne net.Error
		switch {
		case err == nil:
			t.Cleanup(func() { c.Close() })
			continue
		case errors.As(err, &ne) && ne.Timeout():
			return "https://" + addr
		}
		// net.ipv4.tcp_abort_on_overflow answers a full queue with a reset.
		t.Skipf("this kernel answers an attempt to connect to a full accept queue (%v)", err)
	}
	t.Fatalf("%s kept accepting connections", addr)
	return ""
}
