package main

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"testing"
	"time"
)

func TestParseLinks(t *testing.T) {
	ps, err := parseLinks("2ms/1000Mbit, 30ms/200Mbit")
	if err != nil {
		t.Fatal(err)
	}
	want := []linkProfile{{2 * time.Millisecond, 1e9}, {30 * time.Millisecond, 200e6}}
	if len(ps) != 2 || ps[0] != want[0] || ps[1] != want[1] {
		t.Fatalf("parseLinks = %v, want %v", ps, want)
	}
	for _, bad := range []string{"30ms", "30/200Mbit", "30ms/fast", "30ms/0Mbit", "-1ms/10Mbit"} {
		if _, err := parseLinks(bad); err == nil {
			t.Errorf("parseLinks(%q) accepted it", bad)
		}
	}
}

// The link delivers every byte, in order, and no sooner than the path
// allows: the handshake's round trip, then the payload at the bandwidth
// and half a round trip each way for the echo.
func TestLinkDelaysAndPaces(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.(*net.TCPConn).CloseWrite() }()
		}
	}()
	p := linkProfile{rtt: 80 * time.Millisecond, bitsPerSec: 8e6} // 1 MB/s
	l, err := startLink(echo.Addr().String(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()

	payload := make([]byte, 200_000) // 0.2 s at 1 MB/s, each way
	rand.Read(payload)
	start := time.Now()
	c, err := net.Dial("tcp", l.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() { c.Write(payload); c.(*net.TCPConn).CloseWrite() }()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if !bytes.Equal(got, payload) {
		t.Fatalf("echoed %d bytes, not the %d sent (or not in order)", len(got), len(payload))
	}
	// Handshake RTT, the payload serialized once (the echo pipelines the
	// way back behind it), one RTT of propagation: 0.08+0.2+0.08 s.
	if min := p.rtt + 200*time.Millisecond + p.rtt; elapsed < min {
		t.Fatalf("the echo took %s through the link; the path allows no less than %s", elapsed, min)
	}
}

// close cuts open connections and returns: a client that keeps its
// connection open (as an HTTP/2 client does) does not hold the bench.
func TestLinkCloseCutsConnections(t *testing.T) {
	srv, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	go func() {
		for {
			c, err := srv.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	l, err := startLink(srv.Addr().String(), linkProfile{rtt: time.Millisecond, bitsPerSec: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", l.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("hello"))
	time.Sleep(20 * time.Millisecond) // the relay has dialled the server
	closed := make(chan struct{})
	go func() { l.close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second): // a hang, not a slow machine
		t.Fatal("close did not return with a connection open")
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the client's connection is still open after close")
	}
}
