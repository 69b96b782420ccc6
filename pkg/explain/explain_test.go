package explain

import (
	"strings"
	"testing"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
)

// TestOneLongFormTwoFormats: for every rule, the text and the markdown long
// forms hold the same content in the same order.
func TestOneLongFormTwoFormats(t *testing.T) {
	all := rules.All()
	if len(all) == 0 {
		t.Fatal("no rule registered")
	}
	for _, r := range all {
		var parts []string
		parts = append(parts, r.ID, r.Title, r.Why)
		for _, k := range r.Facts {
			parts = append(parts, string(k))
		}
		parts = append(parts, r.Remedy, r.Escape)
		// A source is a docs page (incidents.md#anchor) or a URL: both
		// forms link it with the reference itself in the target.
		parts = append(parts, r.Sources...)
		for _, f := range []Format{FormatText, FormatMarkdown} {
			var b strings.Builder
			if err := Long(&b, r, f); err != nil {
				t.Fatal(err)
			}
			out, at := b.String(), 0
			for _, p := range parts {
				i := strings.Index(out[at:], p)
				if i < 0 {
					t.Errorf("%s (format %d) lacks, or has out of order, %q:\n%s", r.ID, f, p, out)
					break
				}
				at += i
			}
			if strings.HasSuffix(out, "\n\n") || !strings.HasSuffix(out, "\n") {
				t.Errorf("%s (format %d) does not end in one newline", r.ID, f)
			}
		}
	}
}
