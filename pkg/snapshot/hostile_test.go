package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A line longer than any scanner buffer is still read: one-line JSON Lists
// of any size are ordinary kubectl output.
func TestDecodeVeryLongLine(t *testing.T) {
	pad := strings.Repeat(" ", 65<<20) // longer than the old 64 MiB line limit
	in := `{"apiVersion":"v1",` + pad + `"kind":"ConfigMap","metadata":{"name":"x"}}`
	located, _, err := Decode("big.json", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(located) != 1 || located[0].Object.GetName() != "x" {
		t.Fatalf("decoded %d objects from a 65 MiB line", len(located))
	}
}

func TestDecodeRefusesInputOverLimit(t *testing.T) {
	defer func(old int) { maxInput = old }(maxInput)
	maxInput = 2 << 20
	r := &zeros{n: maxInput + 10}
	_, _, err := Decode("huge.yaml", r)
	var pe *ParseError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "larger than 2 MiB") {
		t.Fatalf("err = %v", err)
	}
	if r.read > maxInput+1 {
		t.Fatalf("read %d bytes: the limit did not stop the read", r.read)
	}
}

type zeros struct{ n, read int }

func (z *zeros) Read(p []byte) (int, error) {
	if z.read >= z.n {
		return 0, fmt.Errorf("EOF")
	}
	k := min(len(p), z.n-z.read)
	for i := range p[:k] {
		p[i] = ' '
	}
	z.read += k
	return k, nil
}

// Nested anchors a few kilobytes long expand to gigabytes: refused quickly,
// with the document's line, before the decoder expands them.
func TestDecodeBoundsAliasExpansion(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n")
	b.WriteString("  l0: &l0 [" + strings.TrimSuffix(strings.Repeat(`"xxxxxxxx",`, 10), ",") + "]\n")
	for i := 1; i < 8; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 10), ",")
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, refs)
	}
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\n" + b.String()
	start := time.Now()
	located, _, err := Decode("bomb.yaml", strings.NewReader(in))
	if err == nil || !strings.Contains(err.Error(), "aliases expand") {
		t.Fatalf("err = %v", err)
	}
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 5 {
		t.Fatalf("error not located at the document (line 5): %#v", err)
	}
	if len(located) != 1 {
		t.Fatalf("the objects before the bad document are kept: got %d", len(located))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Logf("slow refusal: %s", d) // a bound, not a timing assertion
	}
}

// Anchors used the way people use them (shared labels) are fine.
func TestDecodeOrdinaryAliases(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: &l {app: a}\n  annotations: *l\n"
	located, _, err := Decode("ok.yaml", strings.NewReader(in))
	if err != nil || len(located) != 1 || located[0].Object.GetAnnotations()["app"] != "a" {
		t.Fatalf("located %d, err %v", len(located), err)
	}
}

func TestDecodeNonObjectDocuments(t *testing.T) {
	for in, want := range map[string]string{
		"just a string\n":    "x.yaml:1: the document is a string, not a Kubernetes object",
		"# c\n- a\n- b\n":    "x.yaml:2: the document is a list, not a Kubernetes object",
		"42\n":               "x.yaml:1: the document is a number, not a Kubernetes object",
		"---\ntrue\n":        "x.yaml:2: the document is a boolean, not a Kubernetes object",
		"[1, 2]":             "x.yaml:1: the document is a list, not a Kubernetes object",
		"~\n---\nnull\n":     "",
		"---\n---\n# only\n": "",
	} {
		_, _, err := Decode("x.yaml", strings.NewReader(in))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if want == "" && got != "" || want != "" && !strings.HasPrefix(got, want) {
			t.Errorf("Decode(%q) = %q, want prefix %q", in, got, want)
		}
	}
}

// The documents of a stream keep their first lines whatever the line endings.
func TestSplitDocumentsLines(t *testing.T) {
	docs := splitDocuments([]byte("a: 1\r\n---\r\nb: 2\n--- \nc: 3"))
	var got []string
	for _, d := range docs {
		got = append(got, fmt.Sprintf("%d:%q", d.line, bytes.TrimSpace(d.body)))
	}
	if want := `1:"a: 1" 3:"b: 2" 5:"c: 3"`; strings.Join(got, " ") != want {
		t.Fatalf("got %s, want %s", strings.Join(got, " "), want)
	}
}
