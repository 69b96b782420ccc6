package model

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Every tag constant of the package has words for the human view: a new
// Branch, GateEffect, VersionSource or gate name without them fails here.
func TestEveryTagHasWords(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	words := map[string]func(string) string{
		"Branch":        func(v string) string { return Branch(v).Words() },
		"GateEffect":    func(v string) string { return GateEffect(v).Words() },
		"VersionSource": func(v string) string { return VersionSource(v).Words() },
	}
	seen := map[string]int{}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok || len(spec.Values) != len(spec.Names) {
				return true
			}
			for i, name := range spec.Names {
				lit, ok := spec.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				kind := ""
				if id, ok := spec.Type.(*ast.Ident); ok {
					kind = id.Name
				} else if strings.HasPrefix(name.Name, "Gate") {
					kind = "gate"
				}
				w := words[kind]
				if kind == "gate" {
					w = GateWords
				}
				if w == nil {
					continue
				}
				seen[kind]++
				if got := w(v); got == v || got == "" {
					t.Errorf("%s %s (%q) has no words for the human view", kind, name.Name, v)
				}
			}
			return true
		})
	}
	for _, kind := range []string{"Branch", "GateEffect", "VersionSource", "gate"} {
		if seen[kind] == 0 {
			t.Errorf("found no %s constant: the test no longer sees them", kind)
		}
	}
	t.Logf("constants with words: %v", seen)
}
