package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
)

// usageAt is the help of --at, which diagnose and escape share.
const usageAt = "with -f RECORD: the moment to replay — a time (03:14:10, 03:14:10.250 or RFC 3339; UTC, on the record's day) or an offset from the record's start (+2m30s)"

// addAtFlag registers --at.
func addAtFlag(cmd *cobra.Command, at *string) {
	cmd.Flags().StringVar(at, "at", "", usageAt)
}

// validateAt checks that --at comes with a file.
func validateAt(at, filename string) error {
	if at != "" && filename == "" {
		return usageErrorf("--at replays a moment of a record: give the record with -f FILE (kubectl rolloutdoctor record writes one)")
	}
	return nil
}

// readFileAt reads -f as the state of a record at the moment --at names.
func readFileAt(name, at string, stdin io.Reader) (*snapshot.Snapshot, string, error) {
	rec, _, display, err := readRecordOrSnapshot(name, stdin)
	if err != nil {
		return nil, "", err
	}
	if rec == nil {
		return nil, "", usageErrorf("--at needs a record: %s holds one moment (a snapshot or kubectl get output); kubectl rolloutdoctor record writes a record", display)
	}
	t, err := parseAt(at, rec)
	if err != nil {
		return nil, "", usageErrorf("--at %q: %w", at, err)
	}
	snap, err := rec.At(t)
	if err != nil {
		return nil, "", &ExitCodeError{Code: ExitError, Err: err}
	}
	return snap, fmt.Sprintf("record %s at %s", display, t.UTC().Format("15:04:05.000Z")), nil
}

// parseAt reads a moment of a record: RFC 3339, a time of day in UTC on
// the record's day (the next day when the record runs past midnight and
// the time is earlier than its start), or +DURATION from its start. It
// must fall within the record.
func parseAt(s string, rec *snapshot.Recording) (time.Time, error) {
	start, last := rec.Start.UTC(), rec.Last.UTC()
	var t time.Time
	switch {
	case strings.HasPrefix(s, "+"):
		d, err := time.ParseDuration(s[1:])
		if err != nil {
			return t, errors.New("an offset is a duration after a +, e.g. +2m30s")
		}
		t = start.Add(d)
	default:
		if x, err := time.Parse(time.RFC3339Nano, s); err == nil {
			t = x.UTC()
			break
		}
		clock := strings.TrimSuffix(strings.TrimSuffix(s, "Z"), "z")
		var tod time.Time
		var err error
		for _, f := range []string{"15:04:05.999999999", "15:04:05", "15:04"} {
			if tod, err = time.Parse(f, clock); err == nil {
				break
			}
		}
		if err != nil {
			return t, errors.New("not a time: use 03:14:10, 03:14:10.250, 2026-08-11T03:14:10Z or +2m30s")
		}
		t = time.Date(start.Year(), start.Month(), start.Day(), tod.Hour(), tod.Minute(), tod.Second(), tod.Nanosecond(), time.UTC)
		if t.Before(start) && last.YearDay() != start.YearDay() {
			t = t.AddDate(0, 0, 1)
		}
	}
	if t.Before(start) || t.After(last) {
		return t, fmt.Errorf("%s is outside the record, which runs from %s to %s", t.Format(time.RFC3339Nano), start.Format(time.RFC3339Nano), last.Format(time.RFC3339Nano))
	}
	return t, nil
}
