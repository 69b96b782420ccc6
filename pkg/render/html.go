package render

import (
	"fmt"
	"html"
	"html/template"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/timeline"
)

// The HTML report is one file that opens from a laptop's disk: the styles
// inline, the chart an inline SVG, no script and nothing fetched — its
// Content-Security-Policy forbids both, so a browser proves it.

// Chart geometry, in CSS pixels. ChartWidth is fixed so that the report
// looks the same wherever it is opened (and a test can find the chart).
const (
	ChartWidth   = 960
	chartLeft    = 64
	chartRight   = 72
	chartTop     = 28
	chartPlot    = 240
	chartLane    = 18
	chartAxis    = 48
	chartPlotW   = ChartWidth - chartLeft - chartRight
	chartBg      = "#f8fafc"
	criticalFill = "#fca5a5"
)

// ChartHeight is the height of a timeline's chart: the plot, a lane per
// finding of warning or worse and one for actions, and the time axis.
func ChartHeight(t *timeline.Timeline) int {
	return chartTop + chartPlot + chartLane*(len(findingLanes(t))+1) + chartAxis
}

// rsColors tell the ReplicaSets apart.
var rsColors = []string{"#2563eb", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#be185d", "#65a30d", "#854d0e"}

// HTMLOptions shape the report.
type HTMLOptions struct {
	// File is the record's path, for the replay command it suggests.
	File string
	// ToolVersion is rolloutdoctor's version, for the footer.
	ToolVersion string
}

// TimelineHTML writes the timeline as one self-contained HTML file: the
// chart (canary weight and each ReplicaSet's available pods over time, the
// stretches where the weight sat on too few pods, each finding's active
// stretches, the actions of people and tools, the gaps), the worst moment,
// what happened and who did it, and how complete the history is.
func TimelineHTML(w io.Writer, t *timeline.Timeline, opt HTMLOptions) error {
	d := htmlData{T: t, Chart: template.HTML(chartSVG(t)), Res: "every change, as recorded"}
	if t.Resolution == timeline.FromCluster {
		d.Res = "what the cluster still holds"
	}
	d.Span = when(t.From) + " → " + stamp(t.To, t.From)
	if p, ok := t.Worst(); ok {
		c, _ := p.Count(p.Canary)
		d.Worst = fmt.Sprintf("%s: canary %d%% on %d of the %d available pods it needs", stamp(p.At, t.From), *p.Weight, c.Available, p.Needs)
		if opt.File != "" && t.Resolution == timeline.FromRecord {
			d.Replay = "kubectl rolloutdoctor diagnose -f " + opt.File + " --at " + p.At.UTC().Format(time.RFC3339Nano)
		}
	}
	for _, e := range t.Entries {
		r := htmlEntry{At: stamp(e.At, t.From), Kind: string(e.Kind), Object: e.Object, Message: e.Message, Warn: e.Warning || e.Kind == timeline.KindAbort || e.Kind == timeline.KindGap, Human: e.Human()}
		if e.Count > 1 {
			r.Message += fmt.Sprintf(" (×%d)", e.Count)
		}
		if e.By != nil {
			r.By = e.By.String()
		}
		d.Entries = append(d.Entries, r)
	}
	for _, f := range t.Findings {
		r := htmlFinding{ID: f.ID, Severity: strings.ToLower(f.Severity.String()), Message: f.Message}
		if f.Worst != "" && f.Worst != f.Message {
			r.Message = f.Worst + " (at its worst, " + stamp(f.WorstAt, t.From) + ")"
		}
		switch {
		case t.Resolution == timeline.FromCluster:
			r.When = "now"
		case f.Open:
			r.When = "since " + stamp(f.From, t.From)
		default:
			r.When = stamp(f.From, t.From) + " → " + stamp(f.To, t.From) + " (" + f.To.Sub(f.From).Round(time.Millisecond).String() + ")"
		}
		d.Findings = append(d.Findings, r)
	}
	for _, c := range t.Complete {
		r := htmlComplete{What: c.What, Note: c.Note}
		if !c.From.IsZero() {
			r.What += " (from " + when(c.From) + ")"
		}
		for _, ct := range c.Cites {
			r.Cites = append(r.Cites, htmlCite{Text: ct.String(), URL: ct.URL()})
		}
		d.Complete = append(d.Complete, r)
	}
	d.Tool = "kubectl rolloutdoctor timeline"
	if opt.ToolVersion != "" {
		d.Tool += " " + opt.ToolVersion
	}
	return pageTemplate.Execute(w, d)
}

type htmlData struct {
	T        *timeline.Timeline
	Chart    template.HTML
	Res      string
	Span     string
	Worst    string
	Replay   string
	Entries  []htmlEntry
	Findings []htmlFinding
	Complete []htmlComplete
	Tool     string
}

type htmlEntry struct {
	At, Kind, Object, Message, By string
	Warn, Human                   bool
}

type htmlFinding struct{ ID, Severity, When, Message string }

type htmlComplete struct {
	What, Note string
	Cites      []htmlCite
}

type htmlCite struct{ Text, URL string }

var pageTemplate = template.Must(template.New("timeline").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Timeline of rollout {{.T.Namespace}}/{{.T.Name}}</title>
<style>
body { font: 14px/1.45 -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; margin: 24px; color: #111827; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 28px 0 8px; }
.meta { color: #4b5563; margin: 0 0 16px; }
.worst { border-left: 4px solid #dc2626; background: #fef2f2; padding: 8px 12px; margin: 0 0 16px; }
.worst code { display: block; margin-top: 4px; }
svg#chart { display: block; }
table { border-collapse: collapse; width: 100%; }
td, th { text-align: left; vertical-align: top; padding: 3px 8px 3px 0; border-bottom: 1px solid #f3f4f6; }
th { color: #6b7280; font-weight: 600; }
td.t { white-space: nowrap; font-variant-numeric: tabular-nums; color: #374151; }
td.o { color: #6b7280; white-space: nowrap; }
.warn { color: #b45309; }
.human { font-weight: 700; }
.sev-critical { color: #dc2626; font-weight: 700; }
.sev-warning { color: #d97706; font-weight: 700; }
.sev-info { color: #0284c7; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 13px; }
footer { margin-top: 32px; color: #9ca3af; font-size: 12px; }
</style>
</head>
<body>
<h1>Timeline of rollout {{.T.Namespace}}/{{.T.Name}}</h1>
<p class="meta">{{.T.Source}} · {{.Span}} · {{.Res}} · controller {{.T.Controller.Assumed}}</p>
{{if .Worst}}<div class="worst"><strong>Worst moment</strong> {{.Worst}}{{if .Replay}}<code>{{.Replay}}</code>{{end}}</div>{{end}}
{{.Chart}}
<h2>What happened</h2>
<table>
<tr><th>time (UTC)</th><th>what</th><th>object</th><th></th><th>by</th></tr>
{{range .Entries}}<tr><td class="t">{{.At}}</td><td>{{.Kind}}</td><td class="o">{{.Object}}</td><td{{if .Warn}} class="warn"{{end}}>{{.Message}}</td><td{{if .Human}} class="human"{{end}}>{{.By}}</td></tr>
{{end}}</table>
{{if .Findings}}<h2>Findings{{if eq .T.Resolution "cluster"}} now{{else}} over time{{end}}</h2>
<table>
{{range .Findings}}<tr><td class="sev-{{.Severity}}">{{.ID}}</td><td class="t">{{.When}}</td><td>{{.Message}}</td></tr>
{{end}}</table>{{end}}
<h2>How complete this is</h2>
<ul>
{{range .Complete}}<li><strong>{{.What}}</strong>: {{.Note}}{{range .Cites}} (<a href="{{.URL}}">{{.Text}}</a>){{end}}</li>
{{end}}{{range .T.Gaps}}<li class="warn"><strong>gap</strong>: {{.String}}</li>
{{end}}</ul>
<footer>{{.Tool}}</footer>
</body>
</html>
`))

// findingLanes are the findings drawn as lanes (warning or worse, one lane
// per ID), in the order they first fired.
func findingLanes(t *timeline.Timeline) []string {
	if t.Resolution == timeline.FromCluster {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range t.Findings {
		if f.Severity >= rules.Warning && !seen[f.ID] {
			seen[f.ID] = true
			out = append(out, f.ID)
		}
	}
	return out
}

// chartSVG draws the chart.
func chartSVG(t *timeline.Timeline) string {
	var b strings.Builder
	h := ChartHeight(t)
	span := t.To.Sub(t.From)
	if span <= 0 {
		span = time.Second
	}
	x := func(at time.Time) float64 {
		f := float64(at.Sub(t.From)) / float64(span)
		return chartLeft + min(max(f, 0), 1)*chartPlotW
	}
	y := func(frac float64) float64 { return chartTop + (1-min(max(frac, 0), 1))*chartPlot }
	scale := float64(t.Scale())
	fmt.Fprintf(&b, `<svg id="chart" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="canary weight and available pods over time">`, ChartWidth, h, ChartWidth, h)
	fmt.Fprintf(&b, `<rect class="bg" x="0" y="0" width="%d" height="%d" fill="%s"/>`, ChartWidth, h, chartBg)
	// Grid and axes: traffic % on the left, pods on the right.
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e5e7eb"/>`, chartLeft, chartLeft+chartPlotW, y(f), y(f))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="11" text-anchor="end" fill="#6b7280">%d%%</text>`, chartLeft-6, y(f)+4, int(f*100))
		if scale > 0 {
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="11" fill="#6b7280">%.0f</text>`, chartLeft+chartPlotW+6, y(f)+4, f*scale)
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="16" font-size="11" fill="#6b7280">traffic to the canary</text>`, chartLeft)
	fmt.Fprintf(&b, `<text x="%d" y="16" font-size="11" text-anchor="end" fill="#6b7280">available pods</text>`, ChartWidth-6)
	// The stretches where the weight sat on fewer pods than it needs.
	for _, r := range shortStretches(t) {
		x0, x1 := x(r[0]), x(r[1])
		fmt.Fprintf(&b, `<rect class="critical" x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="0.55"><title>%s</title></rect>`,
			x0, chartTop, max(x1-x0, 2), chartPlot, criticalFill, html.EscapeString("the canary weight on fewer available pods than it needs, "+stamp(r[0], t.From)+" → "+stamp(r[1], t.From)))
	}
	// Gaps of a record, and what the cluster no longer knows.
	for _, g := range t.Gaps {
		x0, x1 := x(g.From), x(g.To)
		fmt.Fprintf(&b, `<rect class="gap" x="%.1f" y="%d" width="%.1f" height="%d" fill="#9ca3af" fill-opacity="0.35"><title>%s</title></rect>`,
			x0, chartTop, max(x1-x0, 2), chartPlot, html.EscapeString("gap: "+g.String()))
	}
	if u0, ok := unknownFrom(t); ok {
		x0, x1 := x(u0), x(t.To)-2
		if x1 > x0 {
			fmt.Fprintf(&b, `<rect class="unknown" x="%.1f" y="%d" width="%.1f" height="%d" fill="#d1d5db" fill-opacity="0.5"/><text x="%.1f" y="%d" font-size="12" text-anchor="middle" fill="#4b5563">unknown: the controller's Events stop here</text>`,
				x0, chartTop, x1-x0, chartPlot, (x0+x1)/2, chartTop+chartPlot/2)
		}
	}
	// Each ReplicaSet's available pods (the sizes its Events set, dashed,
	// where availability is not kept), then the weight on top.
	for i, rs := range t.ReplicaSets {
		color := rsColors[i%len(rsColors)]
		path, dashed := stepPath(t, x, func(p timeline.Point) (float64, bool) {
			c, ok := p.Count(rs.Hash)
			if !ok || scale <= 0 {
				return 0, false
			}
			if p.SizesOnly {
				return y(float64(c.Spec) / scale), true
			}
			return y(float64(c.Available) / scale), true
		})
		if path == "" {
			continue
		}
		dash := ""
		if dashed {
			dash = ` stroke-dasharray="5 3"`
		}
		fmt.Fprintf(&b, `<path class="avail" data-hash="%s" d="%s" fill="none" stroke="%s" stroke-width="2"%s><title>%s</title></path>`,
			html.EscapeString(rs.Hash), path, color, dash, html.EscapeString(rsTitle(rs)))
	}
	wpath, _ := stepPath(t, x, func(p timeline.Point) (float64, bool) {
		if p.Weight == nil {
			return 0, false
		}
		return y(float64(*p.Weight) / 100), true
	})
	if wpath != "" {
		fmt.Fprintf(&b, `<path class="weight" d="%s" fill="none" stroke="#111827" stroke-width="3"><title>canary traffic weight</title></path>`, wpath)
	}
	// Lanes: each finding's active stretches, then the actions.
	lanes := findingLanes(t)
	ly := chartTop + chartPlot + 6
	for _, id := range lanes {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="end" fill="#374151">%s</text>`, chartLeft-6, ly+11, html.EscapeString(id))
		for _, f := range t.Findings {
			if f.ID != id {
				continue
			}
			color := "#f59e0b"
			if f.Severity == rules.Critical {
				color = "#dc2626"
			}
			x0, x1 := x(f.From), x(f.To)
			fmt.Fprintf(&b, `<rect class="finding" data-id="%s" x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s</title></rect>`,
				html.EscapeString(f.ID), x0, ly+2, max(x1-x0, 2), chartLane-6, color, html.EscapeString(f.ID+": "+f.Message))
		}
		ly += chartLane
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="end" fill="#374151">actions</text>`, chartLeft-6, ly+11)
	for _, e := range t.Entries {
		if !e.Human() || e.At.Before(t.From) || e.At.After(t.To) {
			continue
		}
		ax := x(e.At)
		label := e.By.String() + ": " + e.Message
		fmt.Fprintf(&b, `<g class="action"><line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#7c3aed" stroke-dasharray="3 3"/><path d="M%.1f %d l5 9 h-10 z" fill="#7c3aed"/><title>%s</title></g>`,
			ax, ax, chartTop, ly+2, ax, ly+2, html.EscapeString(stamp(e.At, t.From)+" "+label))
	}
	ly += chartLane
	// The time axis.
	for i := 0; i <= 5; i++ {
		at := t.From.Add(time.Duration(float64(span) * float64(i) / 5))
		tx := x(at)
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case 5:
			anchor = "end"
		}
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#9ca3af"/><text x="%.1f" y="%d" font-size="11" text-anchor="%s" fill="#374151">%s</text>`,
			tx, tx, chartTop+chartPlot, chartTop+chartPlot+4, tx, ly+14, anchor, stamp(at.Truncate(time.Millisecond), t.From))
	}
	// The legend.
	lx := chartLeft
	legend := func(color, label string, dashed bool) {
		dash := ""
		if dashed {
			dash = ` stroke-dasharray="5 3"`
		}
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="3"%s/><text x="%d" y="%d" font-size="11" fill="#374151">%s</text>`,
			lx, lx+18, h-10, h-10, color, dash, lx+22, h-6, html.EscapeString(label))
		lx += 30 + 6*len(label)
	}
	legend("#111827", "canary weight", false)
	for i, rs := range t.ReplicaSets {
		legend(rsColors[i%len(rsColors)], rsLabel(rs)+" available", false)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// stepPath draws a value held from each point to the next, to the end of
// the timeline; dashed is true when a point gave sizes only. What the
// cluster holds says nothing between its last Event and now: the line
// stops at that Event, and the state now is a short stroke at the end.
func stepPath(t *timeline.Timeline, x func(time.Time) float64, val func(timeline.Point) (float64, bool)) (string, bool) {
	var b strings.Builder
	open, dashed := false, false
	for i, p := range t.Series {
		v, ok := val(p)
		if !ok {
			open = false
			continue
		}
		dashed = dashed || p.SizesOnly
		px := x(p.At)
		if t.Resolution == timeline.FromCluster && !p.SizesOnly {
			fmt.Fprintf(&b, "M%.1f %.1f H%.1f", x(t.To)-10, v, x(t.To))
			open = false
			continue
		}
		if !open {
			fmt.Fprintf(&b, "M%.1f %.1f", px, v)
			open = true
		} else {
			fmt.Fprintf(&b, "H%.1f V%.1f", px, v)
		}
		if i+1 == len(t.Series) {
			fmt.Fprintf(&b, "H%.1f", x(t.To))
		}
	}
	return b.String(), dashed
}

// shortStretches are the stretches where the canary weight needed more
// available pods than the canary had.
func shortStretches(t *timeline.Timeline) [][2]time.Time {
	var out [][2]time.Time
	for i, p := range t.Series {
		if !p.Short {
			continue
		}
		end := t.To
		if i+1 < len(t.Series) {
			end = t.Series[i+1].At
		}
		if n := len(out); n > 0 && out[n-1][1].Equal(p.At) {
			out[n-1][1] = end
			continue
		}
		out = append(out, [2]time.Time{p.At, end})
	}
	return out
}

// unknownFrom is, for the cluster's timeline, the last moment its Events
// tell the state (ok false when they tell nothing, or for a record).
func unknownFrom(t *timeline.Timeline) (time.Time, bool) {
	if t.Resolution != timeline.FromCluster {
		return time.Time{}, false
	}
	var last time.Time
	for _, p := range t.Series {
		if p.SizesOnly {
			last = p.At
		}
	}
	return last, !last.IsZero()
}

func rsTitle(r timeline.ReplicaSet) string {
	s := r.Name
	if r.Revision != "" {
		s += " (revision " + r.Revision + ")"
	}
	if len(r.Images) > 0 {
		imgs := append([]string(nil), r.Images...)
		sort.Strings(imgs)
		s += ": " + strings.Join(imgs, ", ")
	}
	return s + ", available pods"
}
