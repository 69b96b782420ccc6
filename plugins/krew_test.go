// Package plugins holds the krew manifest template; this test keeps it one.
package plugins

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

type manifest struct {
	Spec struct {
		Version   string `json:"version"`
		Caveats   string `json:"caveats"`
		Platforms []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			Sha256 string `json:"sha256"`
			Files  []struct {
				From string `json:"from"`
			} `json:"files"`
			Bin string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

// plugins/krew.yaml is a template that make dist fills in (dist/krew.yaml):
// it must carry placeholders, never values that pass for a release's — an
// all-zero sha256 once sat here under a comment calling it the last
// release's. hack/dist.sh and hack/krew-test.sh check the filled-in one.
func TestKrewManifestIsATemplate(t *testing.T) {
	b, err := os.ReadFile("krew.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if hex := regexp.MustCompile(`[0-9a-fA-F]{64}`).FindString(string(b)); hex != "" {
		t.Errorf("krew.yaml carries a sha256-like value %s: use {{SHA256 ARCHIVE}}", hex)
	}
	if regexp.MustCompile(`\bv\d+\.\d+\.\d+\b`).Match(b) {
		t.Errorf("krew.yaml names a version: use {{VERSION}}")
	}
	var m manifest
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("the template is not YAML: %v", err)
	}
	if m.Spec.Version != "{{VERSION}}" {
		t.Errorf("spec.version %q, want {{VERSION}}", m.Spec.Version)
	}
	if !strings.Contains(m.Spec.Caveats, "/store/rolloutdoctor/{{VERSION}}/kubectl_complete-rolloutdoctor") {
		t.Errorf("the caveats do not link the completion helper of {{VERSION}}:\n%s", m.Spec.Caveats)
	}
	seen := map[string]bool{}
	for _, p := range m.Spec.Platforms {
		goos, arch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		archive := "kubectl-rolloutdoctor_" + goos + "_" + arch + ".tar.gz"
		seen[goos+"/"+arch] = true
		if p.URI != "{{BASE_URL}}/"+archive {
			t.Errorf("%s/%s: uri %q, want {{BASE_URL}}/%s", goos, arch, p.URI, archive)
		}
		if p.Sha256 != "{{SHA256 "+archive+"}}" {
			t.Errorf("%s/%s: sha256 %q, want {{SHA256 %s}}", goos, arch, p.Sha256, archive)
		}
		ext := ""
		if goos == "windows" {
			ext = ".exe"
		}
		files := map[string]bool{}
		for _, f := range p.Files {
			files[f.From] = true
		}
		helper := "kubectl_complete-rolloutdoctor"
		if goos == "windows" {
			helper += ".cmd"
		}
		if p.Bin != "kubectl-rolloutdoctor"+ext || !files[p.Bin] || !files[helper] || !files["LICENSE"] {
			t.Errorf("%s/%s: bin %q, files %v: want the binary, %s and LICENSE", goos, arch, p.Bin, files, helper)
		}
	}
	// hack/dist.sh's default PLATFORMS.
	for _, p := range []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"} {
		if !seen[p] {
			t.Errorf("no platform %s", p)
		}
	}
}
