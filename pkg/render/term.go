package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// Terminal control goes through charmbracelet/x/ansi (the library lipgloss
// itself uses) rather than escape codes written out here, and text is cut
// by display width, never by bytes: a byte slice can split a UTF-8
// character, and a rune count misjudges wide characters.

// Truncate shortens s to at most width terminal cells, ending it with tail
// when it had to cut. ANSI styling in s is kept intact.
func Truncate(s string, width int, tail string) string {
	// Printable ASCII (the common case: a scan's thousands of cells) is a
	// cell per byte; anything else goes through the ANSI parser.
	if printableASCII(s) && printableASCII(tail) {
		if len(s) <= width {
			return s
		}
		if len(tail) > width {
			return "" // as the parser: no room for the tail
		}
		return s[:width-len(tail)] + tail
	}
	return ansi.Truncate(s, width, tail)
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// Redraw starts a new frame of a watched report. On a colour terminal
// (clear) it homes the cursor and clears the screen, so each report
// replaces the last; in plain human output it separates frames with a
// timestamped line; documents (-o json|yaml) simply follow one another.
func Redraw(w io.Writer, clear, human bool, at time.Time) {
	switch {
	case clear:
		io.WriteString(w, ansi.CursorHomePosition+ansi.EraseEntireScreen)
	case human:
		fmt.Fprintf(w, "--- %s\n", at.UTC().Format(time.RFC3339))
	}
}

// Progress overwrites the current terminal line with what is being read
// and how many so far (for stderr on a terminal only).
func Progress(w io.Writer, what string, n int) {
	fmt.Fprintf(w, "\rreading %ss: %d%s", strings.ToLower(what), n, ansi.EraseLineRight)
}

// ClearProgress erases the progress line, leaving the cursor at its start.
func ClearProgress(w io.Writer) {
	io.WriteString(w, "\r"+ansi.EraseLineRight)
}

// ClusterProgress is the progress line of a multi-cluster scan: how many
// clusters have answered and which are still outstanding.
func ClusterProgress(w io.Writer, total, left int, outstanding []string) {
	names := strings.Join(outstanding, ", ")
	fmt.Fprintf(w, "\rclusters: %d of %d read; waiting for %s%s", total-left, total, Truncate(names, 60, "…"), ansi.EraseLineRight)
}
