package lint

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// Config is the lint configuration file (.rolloutdoctor.yaml):
//
//	ignore:
//	- id: RD202                 # finding ID or name
//	  rollout: "batch-*"        # glob on the Rollout name (optional)
//	  namespace: jobs           # optional
//	  file: "charts/legacy/*"   # glob on the input path (optional)
//	  reason: capacity planned with minPods 4, see ADR-12
type Config struct {
	Path   string   `json:"-"`
	Ignore []Ignore `json:"ignore"`
}

// Ignore is one suppression; every field set must match.
type Ignore struct {
	ID        string `json:"id"`
	Rollout   string `json:"rollout,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	File      string `json:"file,omitempty"`
	Reason    string `json:"reason"`
}

// LoadConfig reads a configuration file; every ignore needs an id and a reason.
func LoadConfig(p string) (*Config, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	c := &Config{}
	if err := yaml.UnmarshalStrict(b, c); err != nil {
		return nil, fmt.Errorf("%s: %v", p, err)
	}
	for i, ig := range c.Ignore {
		if ig.ID == "" || ig.Reason == "" {
			return nil, fmt.Errorf("%s: ignore[%d] needs an id and a reason", p, i)
		}
	}
	c.Path = p
	return c, nil
}
