package render

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/fleet"
)

func TestTruncateCutsByDisplayWidthNeverInsideACharacter(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		width    int
		want     string
	}{
		{"short text is kept", "RD101 fine", 90, "RD101 fine"},
		{"ASCII as before", strings.Repeat("a", 91), 90, strings.Repeat("a", 87) + "..."},
		// 2-byte characters: a byte cut at 87 would split the 44th "é".
		{"two-byte runes", strings.Repeat("é", 100), 90, strings.Repeat("é", 87) + "..."},
		// Wide characters take two cells each: 43 of them and the tail fill 89.
		{"wide runes", strings.Repeat("東", 50), 90, strings.Repeat("東", 43) + "..."},
		{"mixed", "RD201 canary on Zürich pods — 東京 too", 20, "RD201 canary on Z..."},
	} {
		got := Truncate(tc.in, tc.width, "...")
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
		if !utf8.ValidString(got) || ansi.StringWidth(got) > tc.width {
			t.Errorf("%s: %q is not valid UTF-8 within %d cells", tc.name, got, tc.width)
		}
	}
}

func TestScanTableKeepsMultiByteFindingsWhole(t *testing.T) {
	top := "RD101 " + strings.Repeat("100 % du trafic sur 2 pods — ", 5)
	rep := &fleet.Report{Scope: "all namespaces", Rollouts: 1, Rows: []fleet.Row{{Namespace: "shop", Name: "checkout-api", Top: top, Phase: "Progressing", Step: "1/4"}}}
	var b bytes.Buffer
	if err := Scan(&b, rep, NewStyles(&b, false)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !utf8.ValidString(out) || !strings.Contains(out, Truncate(top, topFindingWidth, "...")) || strings.Contains(out, top) {
		t.Fatalf("scan table:\n%s", out)
	}
}

func TestRedrawUsesTheTerminalLibrary(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	Redraw(&b, true, true, at)
	if b.String() != ansi.CursorHomePosition+ansi.EraseEntireScreen {
		t.Fatalf("colour terminal: %q", b.String())
	}
	b.Reset()
	Redraw(&b, false, true, at)
	if b.String() != "--- 2026-12-01T10:00:00Z\n" {
		t.Fatalf("plain: %q", b.String())
	}
	b.Reset()
	Redraw(&b, false, false, at)
	if b.Len() != 0 {
		t.Fatalf("documents need no separator: %q", b.String())
	}
	b.Reset()
	Progress(&b, "ReplicaSet", 1200)
	ClearProgress(&b)
	if b.String() != "\rreading replicasets: 1200"+ansi.EraseLineRight+"\r"+ansi.EraseLineRight {
		t.Fatalf("progress: %q", b.String())
	}
}

// TestTruncateASCIIAsTheParser: the printable-ASCII shortcut cuts exactly
// where the ANSI parser does, at every width.
func TestTruncateASCIIAsTheParser(t *testing.T) {
	for _, s := range []string{"", "a", "RD310 steps [20 40 100] end in setWeight 100", strings.Repeat("x", 120)} {
		for _, tail := range []string{"", "...", "~"} {
			for w := 0; w <= len(s)+2; w++ {
				if got, want := Truncate(s, w, tail), ansi.Truncate(s, w, tail); got != want {
					t.Fatalf("Truncate(%q, %d, %q) = %q, the parser gives %q", s, w, tail, got, want)
				}
			}
		}
	}
}
