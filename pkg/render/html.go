package render

import (
	"io"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/timeline"
)

// TimelineHTML writes the timeline as one self-contained HTML file.
func TimelineHTML(w io.Writer, t *timeline.Timeline) error {
	_, err := io.WriteString(w, "<!doctype html>")
	return err
}
