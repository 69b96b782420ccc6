package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/diagnose"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/timeline"
)

// TimelineOptions shape the terminal timeline.
type TimelineOptions struct {
	// Width is the terminal's width in cells (0: 100).
	Width int
	// File is the -f input, for the replay command it suggests ("" for a
	// cluster).
	File string
	// All lists every entry; by default the Events that only echo a
	// change already listed (a ReplicaSet creating its pods) are left out.
	All bool
}

// labelWidth is the width of a lane's label.
const labelWidth = 16

// blocks are the eight levels of a lane cell.
var blocks = []rune("▁▂▃▄▅▆▇█")

// Timeline writes a timeline for a terminal: a swimlane of the canary
// weight against each ReplicaSet's available pods over time, the findings
// active at each moment and the human actions marked; the worst moment and
// how to replay it; what happened, with who did it; how long each finding
// lasted; and how complete the history is.
func Timeline(w io.Writer, t *timeline.Timeline, s Styles, opt TimelineOptions) error {
	var b strings.Builder
	width := opt.Width
	if width <= 0 {
		width = 100
	}
	res := "every change, as recorded"
	if t.Resolution == timeline.FromCluster {
		res = "what the cluster still holds"
	}
	fmt.Fprintf(&b, "%s %s\n", s.Title.Render("Timeline of rollout "+t.Namespace+"/"+t.Name),
		s.Dim.Render(fmt.Sprintf("(%s, %s → %s, %s; controller %s)", t.Source, when(t.From), stamp(t.To, t.From), res, t.Controller.Assumed)))
	swimlane(&b, t, s, width)
	worstMoment(&b, t, s, opt)
	fmt.Fprintf(&b, "\n%s\n", s.Title.Render("What happened"))
	n := 0
	for _, e := range t.Entries {
		if !opt.All && echo(e) {
			n++
			continue
		}
		b.WriteString(entryLine(e, t, s) + "\n")
	}
	if n > 0 {
		fmt.Fprintf(&b, "  %s\n", s.Dim.Render(fmt.Sprintf("(%d Events of ReplicaSets creating and deleting pods left out: --all shows them)", n)))
	}
	findingSpans(&b, t, s)
	fmt.Fprintf(&b, "\n%s\n", s.Title.Render("How complete this is"))
	for _, c := range t.Complete {
		line := c.What + ": " + c.Note
		if !c.From.IsZero() {
			line = c.What + " (from " + when(c.From) + "): " + c.Note
		}
		fmt.Fprintf(&b, "  %s\n", line)
		for _, ct := range c.Cites {
			fmt.Fprintf(&b, "      %s\n", s.Dim.Render("code: "+ct.String()))
		}
	}
	for _, g := range t.Gaps {
		fmt.Fprintf(&b, "  %s\n", s.Warn.Render("gap: "+g.String()))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// echo is an Event that repeats what a listed change says: a ReplicaSet's
// pods created and deleted.
func echo(e timeline.Entry) bool {
	return e.Kind == timeline.KindEvent && strings.HasPrefix(e.Object, "ReplicaSet ") &&
		(strings.HasPrefix(e.Message, "SuccessfulCreate") || strings.HasPrefix(e.Message, "SuccessfulDelete"))
}

// stamp is a time as HH:MM:SS(.mmm), with the date when it is not ref's.
func stamp(t, ref time.Time) string {
	t, ref = t.UTC(), ref.UTC()
	f := "15:04:05"
	if t.Nanosecond() != 0 {
		f = "15:04:05.000"
	}
	if t.YearDay() != ref.YearDay() || t.Year() != ref.Year() {
		f = "2006-01-02 " + f
	}
	return t.Format(f) + "Z"
}

// bucket is one column of the swimlane: the points in its stretch, and
// the state it starts with.
type bucket struct {
	pts []timeline.Point
}

func buckets(t *timeline.Timeline, n int) []bucket {
	out := make([]bucket, n)
	span := t.To.Sub(t.From)
	if span <= 0 {
		span = time.Second
	}
	var cur *timeline.Point
	j := 0
	for i := range out {
		end := t.From.Add(time.Duration(float64(span) * float64(i+1) / float64(n)))
		if cur != nil {
			out[i].pts = append(out[i].pts, *cur)
		}
		for j < len(t.Series) && (t.Series[j].At.Before(end) || i == n-1) {
			out[i].pts = append(out[i].pts, t.Series[j])
			cur = &t.Series[j]
			j++
		}
	}
	return out
}

// level is a cell for v of full (a space when absent).
func level(v, full int64, present bool) string {
	switch {
	case !present:
		return " "
	case v <= 0:
		return "·"
	case full <= 0:
		return string(blocks[len(blocks)-1])
	}
	i := int((v*int64(len(blocks)) + full - 1) / full)
	return string(blocks[min(max(i, 1), len(blocks))-1])
}

// swimlane draws the lanes.
func swimlane(b *strings.Builder, t *timeline.Timeline, s Styles, width int) {
	n := width - labelWidth - 4
	if n < 10 || len(t.Series) == 0 {
		return
	}
	bs := buckets(t, n)
	if t.Resolution == timeline.FromCluster {
		// The last column is now: the state now, not the last Event's.
		bs[n-1].pts = t.Series[len(t.Series)-1:]
	}
	// What the cluster keeps stops at the last Event: from there to now
	// the lanes are unknown, not the last value carried on.
	unknownFrom := n
	if t.Resolution == timeline.FromCluster {
		lastEvent := time.Time{}
		for _, p := range t.Series {
			if p.SizesOnly {
				lastEvent = p.At
			}
		}
		span := t.To.Sub(t.From)
		if !lastEvent.IsZero() && span > 0 {
			unknownFrom = min(int(float64(lastEvent.Sub(t.From))/float64(span)*float64(n))+1, n-1)
		}
	}
	unknown := func(i int) bool { return i >= unknownFrom && i < n-1 }
	b.WriteString("\n" + axis(t, n) + "\n")
	// The canary weight: the highest in each column, red where the canary
	// had fewer available pods than it needs.
	var cells []string
	maxW := int32(0)
	for i, bk := range bs {
		if unknown(i) {
			cells = append(cells, s.Dim.Render("?"))
			continue
		}
		var w int32
		present, short := false, false
		for _, p := range bk.pts {
			if p.Weight != nil {
				present = true
				w = max(w, *p.Weight)
			}
			short = short || p.Short
		}
		maxW = max(maxW, w)
		c := level(int64(w), 100, present)
		if short {
			c = s.Crit.Render(c)
		}
		cells = append(cells, c)
	}
	lane(b, "canary weight", cells, fmt.Sprintf("max %d%%", maxW), s)
	scale := int64(t.Scale())
	for _, rs := range t.ReplicaSets {
		cells = cells[:0]
		seen := false
		sizesOnly := false
		for i, bk := range bs {
			if unknown(i) {
				cells = append(cells, s.Dim.Render("?"))
				continue
			}
			var v int64 = -1
			short := false
			for _, p := range bk.pts {
				c, ok := p.Count(rs.Hash)
				if !ok {
					continue
				}
				x := int64(c.Available)
				if p.SizesOnly {
					x, sizesOnly = int64(c.Spec), true
				}
				if v < 0 || x < v {
					v = x
				}
				short = short || p.Short && p.Canary == rs.Hash
			}
			seen = seen || v >= 0
			c := level(v, scale, v >= 0)
			if short {
				c = s.Crit.Render(c)
			}
			cells = append(cells, c)
		}
		if !seen {
			continue
		}
		note := fmt.Sprintf("available of %d", scale)
		if sizesOnly {
			note = fmt.Sprintf("size of %d (Events)", scale)
		}
		lane(b, rsLabel(rs), cells, note, s)
	}
	drawn := map[string]bool{} // a finding active twice has one lane
	for _, f := range t.Findings {
		// The cluster's findings are those of now: no lane to draw.
		if f.Severity < rules.Warning || drawn[f.ID] || t.Resolution == timeline.FromCluster {
			continue
		}
		drawn[f.ID] = true
		cells = cells[:0]
		for _, bk := range bs {
			on := false
			for _, p := range bk.pts {
				for _, id := range p.Findings {
					on = on || id == f.ID
				}
			}
			c := "·"
			if on {
				c = "█"
				if f.Severity == rules.Critical {
					c = s.Crit.Render(c)
				} else {
					c = s.Warn.Render(c)
				}
			}
			cells = append(cells, c)
		}
		lane(b, f.ID, cells, strings.ToLower(f.Severity.String()), s)
	}
	// Human actions: a mark in the column of each.
	marks := make([]string, n)
	for i := range marks {
		marks[i] = " "
	}
	any := false
	span := t.To.Sub(t.From)
	for _, e := range t.Entries {
		if !e.Human() || span <= 0 || e.At.Before(t.From) || e.At.After(t.To) {
			continue
		}
		i := min(int(float64(e.At.Sub(t.From))/float64(span)*float64(n)), n-1)
		marks[i], any = s.Warn.Render("▲"), true
	}
	if any {
		lane(b, "actions", marks, "people and tools", s)
	}
	if unknownFrom < n-1 {
		fmt.Fprintf(b, "  %s\n", s.Dim.Render("? unknown: the controller's Events stop there (see how complete this is); the last column is now"))
	}
}

func lane(b *strings.Builder, label string, cells []string, note string, s Styles) {
	fmt.Fprintf(b, "  %-*s %s %s\n", labelWidth, Truncate(label, labelWidth, "…"), strings.Join(cells, ""), s.Dim.Render(note))
}

// rsLabel names a ReplicaSet's lane: its revision and hash.
func rsLabel(r timeline.ReplicaSet) string {
	h := r.Hash
	if len(h) > 8 {
		h = h[:8]
	}
	if r.Revision != "" {
		return "rev " + r.Revision + " " + h
	}
	return h
}

// axis is the time axis above the lanes: a few labels, evenly spaced.
func axis(t *timeline.Timeline, n int) string {
	line := []rune(strings.Repeat(" ", n))
	span := t.To.Sub(t.From)
	label := func(at time.Time) string { return stamp(at.Truncate(time.Second), t.From) }
	w := len(label(t.From)) + 2
	for col := 0; col+w <= n; col += max(w, n/4) {
		l := []rune(label(t.From.Add(time.Duration(float64(span) * float64(col) / float64(n)))))
		copy(line[col:], l)
	}
	return "  " + strings.Repeat(" ", labelWidth+1) + strings.TrimRight(string(line), " ")
}

// worstMoment says when the most traffic sat on the fewest canary pods,
// and how to replay that moment.
func worstMoment(b *strings.Builder, t *timeline.Timeline, s Styles, opt TimelineOptions) {
	p, ok := t.Worst()
	if !ok {
		return
	}
	c, _ := p.Count(p.Canary)
	msg := fmt.Sprintf("canary %d%% on %d of the %d available pods it needs", *p.Weight, c.Available, p.Needs)
	sev := map[string]rules.Severity{}
	for _, f := range t.Findings {
		sev[f.ID] = max(sev[f.ID], f.Severity)
	}
	var ids []string
	for _, id := range p.Findings {
		if sev[id] >= rules.Warning {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		msg += " — " + strings.Join(ids, ", ")
	}
	fmt.Fprintf(b, "\n%s %s  %s\n", s.Bold.Render("Worst moment"), stamp(p.At, t.From), s.Crit.Render(msg))
	if opt.File != "" && t.Resolution == timeline.FromRecord {
		fmt.Fprintf(b, "  %s\n", s.Dim.Render("replay it: kubectl rolloutdoctor diagnose -f "+opt.File+" --at "+p.At.UTC().Format(time.RFC3339Nano)))
	}
}

// entryLine is one entry: time, object, what, who.
func entryLine(e timeline.Entry, t *timeline.Timeline, s Styles) string {
	msg := e.Message
	if e.Count > 1 {
		msg += fmt.Sprintf(" (×%d)", e.Count)
	}
	if e.Warning || e.Kind == timeline.KindAbort || e.Kind == timeline.KindGap {
		msg = s.Warn.Render(msg)
	}
	who := ""
	if e.By != nil {
		who = "  by " + e.By.String()
		if e.Human() {
			who = s.Bold.Render(who)
		} else {
			who = s.Dim.Render(who)
		}
	}
	kind := string(e.Kind)
	return fmt.Sprintf("  %-14s %-9s %s  %s%s", stamp(e.At, t.From), kind, s.Dim.Render(e.Object), msg, who)
}

// findingSpans lists how long each finding was active.
func findingSpans(b *strings.Builder, t *timeline.Timeline, s Styles) {
	if len(t.Findings) == 0 {
		return
	}
	title := "Findings over time"
	if t.Resolution == timeline.FromCluster {
		title = "Findings now"
	}
	fmt.Fprintf(b, "\n%s %s\n", s.Title.Render(title), s.Dim.Render("(the Rollout's; kubectl rolloutdoctor pods for the pod checks)"))
	for _, f := range t.Findings {
		msg := f.Message
		if f.Worst != "" && f.Worst != f.Message {
			msg = f.Worst + " (at its worst, " + stamp(f.WorstAt, t.From) + ")"
		}
		when := stamp(f.From, t.From) + " → " + stamp(f.To, t.From)
		if f.Open {
			when = "since " + stamp(f.From, t.From)
		} else {
			when += " (" + f.To.Sub(f.From).Round(time.Millisecond).String() + ")"
		}
		if t.Resolution == timeline.FromCluster {
			when = ""
		}
		fmt.Fprintf(b, "  %s %s %s %s\n", s.sev(diagnose.Severity(f.Severity)), s.Bold.Render(f.ID), s.Dim.Render(when), msg)
	}
}
