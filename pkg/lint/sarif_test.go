package lint

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestSARIFValidAgainstSchema validates lint's SARIF output, with findings,
// suppressions (annotation and config) and a parse error, against the
// published SARIF 2.1.0 schema (testdata/sarif-schema-2.1.0.json, OASIS
// errata01).
func TestSARIFValidAgainstSchema(t *testing.T) {
	f, err := os.Open("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("sarif-schema-2.1.0.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig("testdata/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs, n, errs := Load([]string{"testdata/rendered"}, nil)
	r := Run(docs, n, errs, Options{Controller: cv("v1.8.2"), Config: cfg})
	if len(r.Findings) == 0 || len(r.Suppressed) < 2 || len(r.Errors) == 0 {
		t.Fatalf("fixture must exercise findings, suppressions and errors: %d/%d/%d", len(r.Findings), len(r.Suppressed), len(r.Errors))
	}
	b, err := json.Marshal(r.SARIF("test"))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("SARIF output is not valid SARIF 2.1.0: %v\n%s", err, b)
	}
	// And the schema does catch a broken log (the test can fail).
	var broken map[string]any
	json.Unmarshal(b, &broken)
	broken["version"] = "2.0"
	bb, _ := json.Marshal(broken)
	inst, _ = jsonschema.UnmarshalJSON(bytes.NewReader(bb))
	if sch.Validate(inst) == nil {
		t.Fatal("the schema accepted version 2.0: validation is not running")
	}
}
