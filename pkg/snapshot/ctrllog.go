package snapshot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ControllerLog is what diagnose read of the controller's container log for
// the target Rollout: the pods read, the window and bound of each read, and
// the lines that name the Rollout (by the controller's own "namespace" and
// "rollout" fields). It travels in the snapshot header, so `diagnose -f` of
// a snapshot says what the live diagnose said.
type ControllerLog struct {
	// Reason says why the log was read: the state that needed explaining,
	// or "--controller-logs=always".
	Reason string `json:"reason"`
	// Since is the start of the window asked for (sinceTime); TailLines
	// and LimitBytes bound each pod's read (the newest TailLines lines of
	// the window, at most LimitBytes of them).
	Since      time.Time   `json:"since"`
	TailLines  int64       `json:"tailLines"`
	LimitBytes int64       `json:"limitBytes"`
	Sources    []LogSource `json:"sources,omitempty"`
	// Lines are the log lines about this Rollout, oldest first.
	Lines []LogLine `json:"lines,omitempty"`
	// Gap is set when the log could not be read (forbidden, no running
	// controller pod): one line that says what to do.
	Gap string `json:"gap,omitempty"`
}

// LogSource is one pod's log read.
type LogSource struct {
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Container string `json:"container"`
	// Bytes read; Truncated when the read hit TailLines or LimitBytes:
	// older lines of the window were left out.
	Bytes     int  `json:"bytes"`
	Truncated bool `json:"truncated,omitempty"`
	// Format is "text" or "json" (the controller's --logformat), "" when no
	// line parsed.
	Format string `json:"format,omitempty"`
	Lines  int    `json:"lines"`
}

// LogLine is one line the controller logged about the Rollout.
type LogLine struct {
	Time  time.Time `json:"time"`
	Level string    `json:"level"`
	Msg   string    `json:"msg"`
	Pod   string    `json:"pod,omitempty"`
	// EventReason is set on the line the controller's event recorder logs
	// for each Event it emits (its event_reason field): the line repeats
	// an Event.
	EventReason string `json:"eventReason,omitempty"`
}

// ParseControllerLog reads a controller's log (logrus, as the controller
// writes it: the text formatter's `time="…" level=… msg="…" key=value`
// lines by default, one JSON object per line with --logformat json) and
// returns the lines whose "namespace" and "rollout" fields name the
// Rollout, oldest first, and the format seen ("text", "json" or "" when no
// line parsed). Lines that are not logrus's (klog's, a panic's stack) are
// skipped.
func ParseControllerLog(data []byte, namespace, rollout string) (lines []LogLine, format string) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var fields map[string]string
		f := "text"
		if raw[0] == '{' {
			fields, f = jsonFields(raw), "json"
		} else {
			fields = textFields(string(raw))
		}
		if _, ok := fields["msg"]; !ok || fields["level"] == "" {
			continue
		}
		if format == "" {
			format = f
		}
		if fields["namespace"] != namespace || fields["rollout"] != rollout {
			continue
		}
		t, _ := time.Parse(time.RFC3339Nano, fields["time"])
		lines = append(lines, LogLine{Time: t, Level: fields["level"], Msg: fields["msg"], EventReason: fields["event_reason"]})
	}
	return lines, format
}

// jsonFields reads one JSON log object; values that are not strings are
// kept as their JSON text.
func jsonFields(raw []byte) map[string]string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = s
		} else {
			out[k] = string(v)
		}
	}
	return out
}

// textFields reads logrus's text format: key=value pairs separated by
// spaces, a value quoted (Go syntax) when it holds spaces, quotes or other
// characters that need it. Nil when the line does not start with a
// key=value pair.
func textFields(s string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(s); {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			break
		}
		eq := strings.IndexByte(s[i:], '=')
		if eq <= 0 || strings.ContainsAny(s[i:i+eq], " \"") {
			if len(out) == 0 {
				return nil
			}
			break
		}
		key := s[i : i+eq]
		i += eq + 1
		if i < len(s) && s[i] == '"' {
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return out // an unterminated value: keep what parsed
			}
			v, err := strconv.Unquote(s[i : j+1])
			if err != nil {
				v = s[i+1 : j]
			}
			out[key] = v
			i = j + 1
			continue
		}
		j := strings.IndexByte(s[i:], ' ')
		if j < 0 {
			j = len(s) - i
		}
		out[key] = s[i : i+j]
		i += j
	}
	return out
}

// String is the gap or a one-line summary of the read.
func (l *ControllerLog) String() string {
	if l.Gap != "" {
		return "could not read the controller's log: " + l.Gap
	}
	pods := make([]string, len(l.Sources))
	for i, s := range l.Sources {
		pods[i] = s.Namespace + "/" + s.Pod
	}
	return fmt.Sprintf("%d line(s) for this Rollout in the log of %s since %s", len(l.Lines), strings.Join(pods, ", "), l.Since.UTC().Format(time.RFC3339))
}
