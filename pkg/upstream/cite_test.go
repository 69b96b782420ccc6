package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// moduleDirs caches, per version, the module cache directory of the
// argo-rollouts source (or the error from resolving it).
var moduleDirs sync.Map // Version -> moduleDirResult

type moduleDirResult struct {
	dir string
	err error
}

// moduleDir asks the go command where the source of Module@v lives, downloading
// it through the module proxy if needed. It runs outside the repository so the
// repository's go.mod is never touched.
func moduleDir(v Version) (string, error) {
	if r, ok := moduleDirs.Load(v); ok {
		res := r.(moduleDirResult)
		return res.dir, res.err
	}
	dir, err := downloadModule(v)
	moduleDirs.Store(v, moduleDirResult{dir, err})
	return dir, err
}

func downloadModule(v Version) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", Module+"@"+string(v))
	cmd.Dir = os.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var info struct {
		Dir   string
		Error string
	}
	jsonErr := json.Unmarshal(stdout.Bytes(), &info)
	switch {
	case runErr != nil:
		msg := strings.TrimSpace(info.Error)
		if msg == "" {
			msg = strings.TrimSpace(stderr.String())
		}
		return "", fmt.Errorf("go mod download %s@%s: %v: %s", Module, v, runErr, msg)
	case jsonErr != nil:
		return "", fmt.Errorf("go mod download %s@%s: parsing output: %v", Module, v, jsonErr)
	case info.Error != "":
		return "", fmt.Errorf("go mod download %s@%s: %s", Module, v, info.Error)
	case info.Dir == "":
		return "", fmt.Errorf("go mod download %s@%s: no Dir in output", Module, v)
	}
	return info.Dir, nil
}

// sourceFiles caches file contents split into lines, keyed by absolute path.
var sourceFiles sync.Map // string -> []string

func sourceLines(path string) ([]string, error) {
	if l, ok := sourceFiles.Load(path); ok {
		return l.([]string), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(b), "\n")
	sourceFiles.Store(path, lines)
	return lines, nil
}

func TestFactsWellFormed(t *testing.T) {
	if len(facts) == 0 {
		t.Fatal("no facts")
	}
	modeled := make(map[Version]bool, len(Modeled))
	for _, v := range Modeled {
		modeled[v] = true
	}
	seen := make(map[Key]bool, len(facts))
	for _, f := range facts {
		if f.Key == "" {
			t.Errorf("fact with empty key (claim %q)", f.Claim)
			continue
		}
		if seen[f.Key] {
			t.Errorf("duplicate fact key %s", f.Key)
		}
		seen[f.Key] = true
		if strings.TrimSpace(f.Claim) == "" {
			t.Errorf("%s: empty Claim", f.Key)
		}
		for v := range f.Lines {
			if !modeled[v] {
				t.Errorf("%s: line for %s, which is not a modeled version", f.Key, v)
			}
		}
		for v, o := range f.Except {
			if !modeled[v] {
				t.Errorf("%s: Except for %s, which is not a modeled version", f.Key, v)
			}
			// The fact's own File and Contains are the newest release's, so
			// that adding a release only adds lines; an exception for it
			// would mean the table states an older reading.
			if v == Newest() {
				t.Errorf("%s: Except for the newest version %s: state its File and Contains on the fact instead", f.Key, v)
			}
			if o == (Override{}) {
				t.Errorf("%s: empty Except for %s", f.Key, v)
			}
			if (o.File != "" && o.File == f.File) || (o.Contains != "" && o.Contains == f.Contains) {
				t.Errorf("%s: Except for %s repeats the fact's own File or Contains", f.Key, v)
			}
		}
		for _, v := range Modeled {
			l, ok := f.Loc(v)
			if !ok {
				t.Errorf("%s: no line for %s", f.Key, v)
				continue
			}
			if l.File == "" {
				t.Errorf("%s @ %s: empty File", f.Key, v)
			}
			if filepath.IsAbs(l.File) || strings.Contains(l.File, "..") {
				t.Errorf("%s @ %s: File %q must be relative to the module root", f.Key, v, l.File)
			}
			if l.Line < 0 {
				t.Errorf("%s @ %s: negative Line %d", f.Key, v, l.Line)
			}
			if strings.TrimSpace(l.Contains) == "" {
				t.Errorf("%s @ %s: empty Contains", f.Key, v)
			}
			if strings.TrimLeft(l.Contains, " \t") != l.Contains {
				t.Errorf("%s @ %s: Contains %q has leading whitespace", f.Key, v, l.Contains)
			}
			c := At(f.Key, v)
			if c.Absent == l.Present() || c.Line != l.Line || c.File != l.File {
				t.Errorf("%s @ %s: At() = %+v, does not match %+v", f.Key, v, c, l)
			}
		}
	}
	if got := len(Facts()); got != len(facts) {
		t.Errorf("Facts() returned %d facts, want %d", got, len(facts))
	}
}

// TestLocOverride pins how Loc combines a fact with its exceptions: an
// exception replaces only the fields it sets, and the line always comes from
// Lines.
func TestLocOverride(t *testing.T) {
	f := Fact{
		Key: "test.override", File: "a.go", Contains: "new text",
		Lines:  Lines{"v1": 10, "v2": absent, "v3": 30},
		Except: map[Version]Override{"v1": {Contains: "old text"}, "v2": {File: "b.go"}},
	}
	for _, tc := range []struct {
		v    Version
		want Loc
		ok   bool
	}{
		{"v1", Loc{File: "a.go", Line: 10, Contains: "old text"}, true},
		{"v2", Loc{File: "b.go", Line: 0, Contains: "new text"}, true},
		{"v3", Loc{File: "a.go", Line: 30, Contains: "new text"}, true},
		{"v4", Loc{}, false},
	} {
		got, ok := f.Loc(tc.v)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Loc(%s) = %+v, %v; want %+v, %v", tc.v, got, ok, tc.want, tc.ok)
		}
	}
	if l, _ := f.Loc("v2"); l.Present() {
		t.Errorf("Loc(v2) is present; absent lines must resolve to not present")
	}
}

// TestCitations opens every cited line in the module cache. A present fact's
// line must contain its Contains substring; an absent fact's file must exist
// and must not contain it anywhere.
func TestCitations(t *testing.T) {
	dirs := make(map[Version]string, len(Modeled))
	for _, v := range Modeled {
		dir, err := moduleDir(v)
		if err != nil {
			t.Fatalf("cannot locate %s@%s source (the Go module proxy or a populated module cache is required): %v", Module, v, err)
		}
		dirs[v] = dir
	}
	for _, f := range facts {
		t.Run(string(f.Key), func(t *testing.T) {
			for _, v := range Modeled {
				l, ok := f.Loc(v)
				if !ok {
					continue // reported by TestFactsWellFormed
				}
				t.Run(string(v), func(t *testing.T) {
					checkLoc(t, f.Key, v, dirs[v], l)
				})
			}
		})
	}
}

func checkLoc(t *testing.T, k Key, v Version, dir string, l Loc) {
	t.Helper()
	lines, err := sourceLines(filepath.Join(dir, filepath.FromSlash(l.File)))
	if err != nil {
		t.Fatalf("%s @ %s: %s: %v", k, v, l.File, err)
	}
	if l.Line == 0 {
		for i, line := range lines {
			if strings.Contains(line, l.Contains) {
				t.Errorf("%s @ %s: cited as absent, but %s:%d = %q contains %q",
					k, v, l.File, i+1, strings.TrimLeft(line, " \t"), l.Contains)
				return
			}
		}
		return
	}
	if l.Line > len(lines) {
		t.Fatalf("%s @ %s: %s:%d is past the end of the file (%d lines)", k, v, l.File, l.Line, len(lines))
	}
	got := strings.TrimLeft(lines[l.Line-1], " \t")
	if !strings.Contains(got, l.Contains) {
		t.Errorf("%s @ %s: %s:%d = %q, want it to contain %q", k, v, l.File, l.Line, got, l.Contains)
	}
}
