package render

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rolloutdoctor/rolloutdoctor/internal/exampletest"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/snapshot"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/timeline"
)

// incidentTimeline is the timeline of the lab record of the seed-000
// incident (examples/incident-record.rec).
func incidentTimeline(t *testing.T) *timeline.Timeline {
	t.Helper()
	f, err := os.Open(exampletest.Path(exampletest.IncidentRecord))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := snapshot.ReadRecording("incident.rec", f)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := timeline.Record(rec, "", "", timeline.Options{Source: "record incident.rec"})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// The report opens from disk with nothing fetched and nothing run: no
// script, no src or stylesheet link, a policy that forbids both, and the
// chart inline.
func TestHTMLIsSelfContained(t *testing.T) {
	var b bytes.Buffer
	tl := incidentTimeline(t)
	if err := TimelineHTML(&b, tl, HTMLOptions{File: "incident.rec"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script", " src=", "<link", "@import", "url(", "<iframe", "<object", "<embed"} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("the report contains %q", bad)
		}
	}
	if !strings.Contains(page, `Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"`) {
		t.Errorf("no policy forbidding scripts and fetches")
	}
	// Links are only to cited source lines, opened by a click.
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "https://github.com/argoproj/argo-rollouts/blob/v1.8.2/") {
			t.Errorf("link to %s", m[1])
		}
	}
	svg := fmt.Sprintf(`<svg id="chart" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d"`, ChartWidth, ChartHeight(tl))
	if !strings.Contains(page, svg) {
		t.Errorf("no inline chart %s", svg)
	}
	for _, want := range []string{`class="critical"`, `class="weight"`, `class="avail" data-hash="6dc7674474"`, `class="finding" data-id="RD101"`, `class="action"`,
		"Worst moment", "incident-responder", "--at 2026-11-30T23:19:48.204104333Z"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %s", want)
		}
	}
}

// chromium finds Debian's chromium (or another Chromium on PATH).
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// The report in a real headless Chromium: the screenshot has the chart at
// its size, the weight drawn, and the stretch where 100% sat on too few
// pods drawn in red where the series puts it. ROLLOUTDOCTOR_CHROMIUM=1
// (CI) makes a missing Chromium a failure; ROLLOUTDOCTOR_SCREENSHOT=FILE
// keeps the screenshot to look at.
func TestHTMLRendersInChromium(t *testing.T) {
	browser := chromium()
	if browser == "" {
		if os.Getenv("ROLLOUTDOCTOR_CHROMIUM") != "" {
			t.Fatal("ROLLOUTDOCTOR_CHROMIUM is set and no chromium is on PATH (apt-get install chromium)")
		}
		t.Skip("no chromium on PATH (apt-get install chromium); ROLLOUTDOCTOR_CHROMIUM=1 makes this a failure")
	}
	dir := t.TempDir()
	tl := incidentTimeline(t)
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := TimelineHTML(f, tl, HTMLOptions{File: "incident.rec"}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
		"--force-device-scale-factor=1", "--window-size=1100,900", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--screenshot="+shot, "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, out)
	}
	if keep := os.Getenv("ROLLOUTDOCTOR_SCREENSHOT"); keep != "" {
		data, _ := os.ReadFile(shot)
		os.WriteFile(keep, data, 0o644)
	}
	pf, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	img, err := png.Decode(pf)
	if err != nil {
		t.Fatal(err)
	}
	// The chart is where its background colour is.
	box := colourBox(img, func(r, g, b int) bool { return r == 248 && g == 250 && b == 252 })
	if box.Dx() != ChartWidth || box.Dy() != ChartHeight(tl) {
		t.Fatalf("the chart is %dx%d at %v, want %dx%d", box.Dx(), box.Dy(), box.Min, ChartWidth, ChartHeight(tl))
	}
	// The critical stretch: the red band over the background, from the
	// moment 100% went on A's first pod until A was full.
	red := colourBox(img, func(r, g, b int) bool { return near(r, 250, 4) && near(g, 203, 6) && near(b, 204, 6) })
	st := shortStretches(tl)
	if len(st) != 1 {
		t.Fatalf("%d critical stretches in the series, want 1", len(st))
	}
	span := tl.To.Sub(tl.From)
	xOf := func(at time.Time) int {
		return box.Min.X + chartLeft + int(float64(at.Sub(tl.From))/float64(span)*chartPlotW+0.5)
	}
	if red.Empty() || !near(red.Min.X, xOf(st[0][0]), 3) || !near(red.Max.X, xOf(st[0][1]), 3) || !near(red.Dy(), chartPlot, 3) {
		t.Errorf("the critical band is drawn at %v, want x %d–%d over the %d-pixel plot", red, xOf(st[0][0]), xOf(st[0][1]), chartPlot)
	}
	// The weight line (near-black) is drawn in the plot.
	dark := 0
	for y := box.Min.Y + chartTop; y < box.Min.Y+chartTop+chartPlot; y++ {
		for x := box.Min.X + chartLeft; x < box.Min.X+chartLeft+chartPlotW; x++ {
			r, g, b := rgb(img, x, y)
			if r < 60 && g < 60 && b < 80 {
				dark++
			}
		}
	}
	if dark < chartPlotW {
		t.Errorf("%d weight-line pixels in the plot, want at least %d (a line across it)", dark, chartPlotW)
	}
}

func rgb(img image.Image, x, y int) (int, int, int) {
	r, g, b, _ := img.At(x, y).RGBA()
	return int(r >> 8), int(g >> 8), int(b >> 8)
}

func near(a, b, tol int) bool { return a-b <= tol && b-a <= tol }

// colourBox is the bounding box of the pixels match accepts.
func colourBox(img image.Image, match func(r, g, b int) bool) image.Rectangle {
	var box image.Rectangle
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			if r, g, b := rgb(img, x, y); match(r, g, b) {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return box
}
