package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// flagLine is one flag of a rendered help: "  -f, --filename FILE   usage".
// pflag separates the value name from the usage by at least two spaces, and
// takes the value name from back-quoted text in the usage, so a usage that
// quotes a command (`kubectl get -o yaml`) shows it as the value name.
var flagLine = regexp.MustCompile(`^\s+(?:-\S, )?--[a-z0-9][a-z0-9-]*(.*?)(?:\s{2,}.*)?$`)

// valueName is the value name shown after a flag in a help line, and
// whether the line is a flag line at all.
func valueName(line string) (string, bool) {
	if !strings.HasPrefix(strings.TrimSpace(line), "-") {
		return "", false
	}
	m := flagLine.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return strings.TrimSpace(m[1]), true
}

func TestValueNameParser(t *testing.T) {
	for line, want := range map[string]string{
		"  -f, --filename kubectl get -o yaml   diagnose a snapshot":  "kubectl get -o yaml",
		"  -f, --filename FILE                  diagnose a snapshot":  "FILE",
		"      --as-group stringArray           Group to impersonate": "stringArray",
		"  -w, --watch                          re-diagnose":          "",
		"      --force  allow an action":                              "",
	} {
		if got, ok := valueName(line); !ok || got != want {
			t.Errorf("valueName(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
}

// Every command's --help shows each flag's value name as one word: text in
// back-quotes in a flag's usage becomes its value name, so a usage that
// quotes a command renders as "-f, --filename kubectl get -o yaml".
func TestHelpFlagValueNamesAreOneWord(t *testing.T) {
	emptyKubeconfig(t)
	help := func(path ...string) string {
		t.Helper()
		out := &bytes.Buffer{}
		root := NewRoot(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: out})
		root.SetArgs(append(path, "--help"))
		if err := root.Execute(); err != nil {
			t.Fatalf("%v --help: %v", path, err)
		}
		return out.String()
	}
	// The command tree as Execute completes it (help, completion and its shells).
	root := NewRoot(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			if !sub.Hidden {
				walk(sub, append(append([]string{}, path...), sub.Name()))
			}
		}
	}
	walk(root, nil)
	if len(paths) < 9 {
		t.Fatalf("walked only %v", paths)
	}
	flags := 0
	for _, path := range paths {
		for _, line := range strings.Split(help(path...), "\n") {
			name, ok := valueName(line)
			if !ok {
				continue
			}
			flags++
			if len(strings.Fields(name)) > 1 {
				t.Errorf("kubectl rolloutdoctor %s --help: value name %q is not one word (back-quotes in the usage?):\n%s", strings.Join(path, " "), name, line)
			}
		}
	}
	if flags == 0 {
		t.Fatal("no flag lines found in any help")
	}
}
