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
		for v := range f.Except {
			if !modeled[v] {
				t.Errorf("%s: Except for %s, which is not a modeled version", f.Key, v)
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
