package timeline

import (
	"bytes"
	"testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// FuzzRecord feeds arbitrary bytes through the whole path of a record —
// reading it, replaying it into a timeline, and the state at a moment —
// and requires that nothing panics: a malformed record is an error.
func FuzzRecord(f *testing.F) {
	data := incident(f)
	lines := bytes.SplitAfter(data, []byte("\n"))
	f.Add(data)
	f.Add(bytes.Join(lines[:12], nil))
	f.Add(append(append([]byte(nil), lines[0]...), []byte(`{"type":"GAP","receivedAt":"2026-11-30T23:19:50Z","resource":"pods","open":true}`+"\n")...))
	f.Add(append(append([]byte(nil), lines[0]...), []byte(`{"type":"DELETED","receivedAt":"2026-11-30T23:19:50Z","ref":{"apiVersion":"v1","kind":"Pod","name":"p"}}`+"\n")...))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := snapshot.ReadRecording("fuzz", bytes.NewReader(data))
		if err != nil {
			return
		}
		_, _ = Record(rec, "", "", Options{})
		if s, err := rec.At(rec.Start.Add(rec.Last.Sub(rec.Start) / 2)); err == nil {
			if ro, err := s.FindRollout("", ""); err == nil {
				_, _ = s.View(ro)
			}
		}
	})
}
