package main

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// A linkProfile is the network path between an engineer and a cluster
// that is not on this machine: its round-trip time and its bandwidth (each
// direction).
type linkProfile struct {
	rtt        time.Duration
	bitsPerSec float64
}

// parseLinks reads -links: profiles as RTT/BANDWIDTH separated by commas,
// such as "2ms/1000Mbit,30ms/200Mbit".
func parseLinks(s string) ([]linkProfile, error) {
	var ps []linkProfile
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		rtt, bw, ok := strings.Cut(f, "/")
		d, err := time.ParseDuration(rtt)
		var mbit float64
		if ok && err == nil {
			_, err = fmt.Sscanf(bw, "%gMbit", &mbit)
		}
		if !ok || err != nil || d < 0 || mbit <= 0 {
			return nil, fmt.Errorf("-links %q: want RTT/BANDWIDTH such as 30ms/200Mbit", f)
		}
		ps = append(ps, linkProfile{rtt: d, bitsPerSec: mbit * 1e6})
	}
	return ps, nil
}

func (p linkProfile) String() string {
	return fmt.Sprintf("%s RTT, %g Mbit/s", p.rtt, p.bitsPerSec/1e6)
}

// A link is a TCP relay on 127.0.0.1 in front of one API server that
// delivers the bytes as the profile's path would: each direction sends at
// most the bandwidth (a chunk leaves once the chunks before it have), and
// every chunk arrives half the round-trip time after it left; a new
// connection waits one round trip (TCP's handshake) before its first byte
// goes out. TLS passes through untouched, so the client talks to the API
// server itself. It does not model loss or TCP's slow start: a real path of
// the same RTT and bandwidth is no faster than this one.
//
// The machine has no netem (tc's delay) in its kernel, which is why this
// is a relay; the bytes it copies cost this process a little CPU on the
// cores the tools run on, which a real network would not.
type link struct {
	ln     net.Listener
	target string
	p      linkProfile
	done   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
}

// startLink listens on a free port of 127.0.0.1 and relays to target
// (host:port).
func startLink(target string, p linkProfile) (*link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &link{ln: ln, target: target, p: p, done: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				l.relay(c)
			}()
		}
	}()
	return l, nil
}

func (l *link) addr() string { return l.ln.Addr().String() }

// close stops accepting, cuts every connection and waits for the relays.
func (l *link) close() {
	close(l.done)
	l.ln.Close()
	l.mu.Lock()
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}

func (l *link) track(cs ...net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.done:
		return false
	default:
	}
	for _, c := range cs {
		l.conns[c] = struct{}{}
	}
	return true
}

func (l *link) untrack(cs ...net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range cs {
		delete(l.conns, c)
		c.Close()
	}
}

func (l *link) relay(client net.Conn) {
	accepted := time.Now()
	server, err := net.Dial("tcp", l.target)
	if err != nil {
		client.Close()
		return
	}
	if !l.track(client, server) {
		client.Close()
		server.Close()
		return
	}
	defer l.untrack(client, server)
	var wg sync.WaitGroup
	wg.Add(2)
	// The handshake's round trip: the client's first bytes leave then.
	go func() { defer wg.Done(); l.pipe(server, client, accepted.Add(l.p.rtt)) }()
	go func() { defer wg.Done(); l.pipe(client, server, accepted.Add(l.p.rtt)) }()
	wg.Wait()
}

// pipe carries src's bytes to dst: a chunk read at t leaves when the path
// is free (the chunks before it sent at the bandwidth), and is written to
// dst half a round trip after it has left.
func (l *link) pipe(dst, src net.Conn, free time.Time) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	// About 8 MiB in flight, more than any path here holds
	// (bandwidth × delay), so the relay never throttles below the profile.
	q := make(chan chunk, 512)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(q)
		for {
			b := make([]byte, 16<<10)
			n, err := src.Read(b)
			if n > 0 {
				now := time.Now()
				if free.Before(now) {
					free = now
				}
				free = free.Add(time.Duration(float64(n*8) / l.p.bitsPerSec * float64(time.Second)))
				select {
				case q <- chunk{b[:n], free.Add(l.p.rtt / 2)}:
				case <-stop:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		if d := time.Until(c.at); d > 0 {
			time.Sleep(d)
		}
		if _, err := dst.Write(c.b); err != nil {
			// The other side is gone: end both directions.
			src.Close()
			dst.Close()
			return
		}
	}
	// src finished: pass the end on, as TCP's FIN would.
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
}
