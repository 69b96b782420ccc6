package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// A build stamped with -ldflags -X (make build, hack/dist.sh) prints the
// stamped version and commit.
func TestVersionPrintsStampedBuild(t *testing.T) {
	defer func(v, c string) { Version, Commit = v, c }(Version, Commit)
	Version, Commit = "v0.2.0-3-g50a6ead-dirty", "50a6ead8f2d745cb1ab49dccb762b0bb24ced5f4"
	out, errOut, code := runCLI(t, "", "version")
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := "rolloutdoctor v0.2.0-3-g50a6ead-dirty (commit 50a6ead8f2d745cb1ab49dccb762b0bb24ced5f4, go"
	if !strings.HasPrefix(out, want) {
		t.Errorf("version printed %q, want it to start with %q", out, want)
	}
}

// -X with a wrong symbol name is silently ignored by the linker, and the
// binary says "commit unknown": every -X in the Makefile and hack/dist.sh
// must name Version or Commit of this package.
func TestLdflagsStampThisPackage(t *testing.T) {
	pkg := reflect.TypeOf(VersionOptions{}).PkgPath()
	valid := map[string]bool{pkg + ".Version": true, pkg + ".Commit": true}
	x := regexp.MustCompile(`-X\s+([^=\s'"]+)=`)
	for _, f := range []string{"Makefile", "hack/dist.sh"} {
		b, err := os.ReadFile(filepath.Join("..", "..", f))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, m := range x.FindAllStringSubmatch(string(b), -1) {
			if !valid[m[1]] {
				t.Errorf("%s: -X %s names no variable the version command prints (want %s.Version or %s.Commit)", f, m[1], pkg, pkg)
			}
			seen[m[1]] = true
		}
		for v := range valid {
			if !seen[v] {
				t.Errorf("%s does not stamp %s", f, v)
			}
		}
	}
}
