package snapshot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// InputIdleTimeout bounds how long a FIFO or device given as input may stay
// silent: a pipe whose writer hangs would otherwise hang the command.
var InputIdleTimeout = 60 * time.Second

// OpenInput opens a file given as input (-f). Regular files open as usual.
// A FIFO or character device (process substitution, /dev/stdin) opens
// without waiting for a writer — no writer reads as empty input — and a read
// that gets nothing for InputIdleTimeout fails. Directories, sockets and
// the like are refused with a one-line error.
func OpenInput(name string) (io.ReadCloser, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", name, unwrapPath(err))
	}
	switch m := st.Mode(); {
	case m.IsRegular():
		return os.Open(name)
	case m&(fs.ModeNamedPipe|fs.ModeCharDevice) != 0:
		f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return nil, fmt.Errorf("cannot open %s: %w", name, unwrapPath(err))
		}
		return &idleReader{f: f, name: name}, nil
	case m.IsDir():
		return nil, fmt.Errorf("%s is a directory: give a file (lint reads directories)", name)
	default:
		return nil, fmt.Errorf("%s is not a regular file (%s): give a file, a pipe or -", name, kindOf(m))
	}
}

// NotRegular names why a directory walk skips a path ("" for a regular file
// or a symlink to one).
func NotRegular(name string) string {
	st, err := os.Stat(name)
	if err != nil || st.Mode().IsRegular() {
		return ""
	}
	return "not a regular file (" + kindOf(st.Mode()) + ")"
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return m.Type().String()
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// idleReader fails a read that waits longer than InputIdleTimeout.
type idleReader struct {
	f    *os.File
	name string
}

func (r *idleReader) Read(p []byte) (int, error) {
	// Pipes opened non-blocking are served by the runtime poller, which
	// honours deadlines; a file that is not pollable ignores it.
	_ = r.f.SetReadDeadline(time.Now().Add(InputIdleTimeout))
	n, err := r.f.Read(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return n, fmt.Errorf("no data from %s for %s: is the command writing to it stuck?", r.name, InputIdleTimeout)
	}
	return n, err
}

func (r *idleReader) Close() error { return r.f.Close() }
