package explain

import (
	"bufio"
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules"
	"github.com/rolloutdoctor/rolloutdoctor/pkg/rules/rulestest"
)

// root is the repository root, from this package's directory.
const root = "../.."

// TestRuleTextCitesNothingInternal: no rule's prose, sources or long form —
// and nothing in the rules.yaml files, comments included — cites a document
// users do not have.
func TestRuleTextCitesNothingInternal(t *testing.T) {
	for _, f := range []string{"pkg/diagnose/rules.yaml", "pkg/podcheck/rules.yaml"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		rulestest.NoInternalRefs(t, f, string(b))
	}
	for _, r := range rules.All() {
		for field, text := range map[string]string{"title": r.Title, "why": r.Why, "remedy": r.Remedy, "escape": r.Escape, "sources": strings.Join(r.Sources, "\n")} {
			rulestest.NoInternalRefs(t, r.ID+" "+field, text)
		}
		for _, f := range []Format{FormatText, FormatMarkdown} {
			var b strings.Builder
			if err := Long(&b, r, f); err != nil {
				t.Fatal(err)
			}
			rulestest.NoInternalRefs(t, r.ID+" long form "+strconv.Itoa(int(f)), b.String())
		}
	}
}

// TestDocsCiteNothingInternal: README.md, every file in docs/ and every
// example cite no document users do not have.
func TestDocsCiteNothingInternal(t *testing.T) {
	files := []string{"README.md"}
	for _, dir := range []string{"docs", "examples"} {
		es, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if !e.IsDir() {
				files = append(files, dir+"/"+e.Name())
			}
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		rulestest.NoInternalRefs(t, f, string(b))
	}
}

// TestSourcesResolve: every source a rule cites opens. A docs page exists
// in docs/ and has the anchor named (computed from its headings as GitHub
// does) and a title in docTitles equal to that heading; a URL is an https URL
// with a host. Every docTitles entry names a heading that exists.
func TestSourcesResolve(t *testing.T) {
	pages := map[string]map[string]string{} // page → anchor → heading
	heading := func(src string) (string, bool) {
		page, anchor, _ := strings.Cut(src, "#")
		hs, ok := pages[page]
		if !ok {
			b, err := os.ReadFile(filepath.Join(root, "docs", page))
			if err != nil {
				t.Errorf("%s: %v", src, err)
			}
			hs = headings(b)
			pages[page] = hs
		}
		if anchor == "" {
			return "", len(hs) > 0 || ok
		}
		h, ok := hs[anchor]
		return h, ok
	}
	for key, title := range docTitles {
		h, ok := heading(key)
		if !ok {
			t.Errorf("docTitles: %s names no heading of docs/%s", key, strings.Split(key, "#")[0])
		} else if h != title {
			t.Errorf("docTitles: %s is titled %q, its heading reads %q", key, title, h)
		}
	}
	n := 0
	for _, r := range rules.All() {
		for _, src := range r.Sources {
			n++
			if isURL(src) {
				if u, err := url.Parse(src); err != nil || u.Scheme != "https" || u.Host == "" {
					t.Errorf("%s: source %q is not an https URL (%v)", r.ID, src, err)
				}
				continue
			}
			if _, ok := heading(src); !ok {
				t.Errorf("%s: source %s names no heading of docs/%s", r.ID, src, strings.Split(src, "#")[0])
			}
			if strings.Contains(src, "#") && docTitles[src] == "" {
				t.Errorf("%s: source %s has no title in docTitles", r.ID, src)
			}
		}
	}
	if n == 0 {
		t.Fatal("no rule cites a source")
	}
}

// headings maps each heading's GitHub anchor to its text: lowercased,
// punctuation other than hyphens and underscores dropped, spaces made
// hyphens, a repeated anchor numbered -1, -2, …. Fenced code is skipped.
func headings(md []byte) map[string]string {
	out := map[string]string{}
	fenced := false
	sc := bufio.NewScanner(bytes.NewReader(md))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		text := strings.TrimLeft(line, "#")
		if fenced || len(text) == len(line) || len(line)-len(text) > 6 || !strings.HasPrefix(text, " ") {
			continue
		}
		text = strings.TrimSpace(text)
		base := anchor(text)
		a := base
		for i := 1; out[a] != ""; i++ {
			a = base + "-" + strconv.Itoa(i)
		}
		out[a] = text
	}
	return out
}

// anchor is GitHub's anchor for a heading's text.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestAnchor(t *testing.T) {
	for h, want := range map[string]string{
		"The fix: drop the final setWeight 100":             "the-fix-drop-the-final-setweight-100",
		"dynamicStableScale and the abort scale-down delay": "dynamicstablescale-and-the-abort-scale-down-delay",
		"`kubectl rolloutdoctor escape` (v1.9+)":            "kubectl-rolloutdoctor-escape-v19",
	} {
		if got := anchor(h); got != want {
			t.Errorf("anchor(%q) = %q, want %q", h, got, want)
		}
	}
	hs := headings([]byte("# A\n\n## Same\n```\n# not a heading\n```\n### Same\n#nospace\n"))
	if len(hs) != 3 || hs["a"] != "A" || hs["same"] != "Same" || hs["same-1"] != "Same" {
		t.Errorf("headings: %q", hs)
	}
}
