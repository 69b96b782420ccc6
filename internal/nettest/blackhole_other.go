//go:build !linux

package nettest

import "testing"

// Blackhole needs Linux's accept queue (see blackhole_linux.go).
func Blackhole(t testing.TB) string {
	t.Skip("a port that drops connection attempts is made with Linux's accept queue")
	return ""
}
