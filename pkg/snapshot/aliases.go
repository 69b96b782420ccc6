package snapshot

import (
	"bytes"
	"fmt"

	yamlv3 "go.yaml.in/yaml/v3"
)

// MaxExpandedNodes bounds what YAML aliases may expand a document to. The
// YAML decoders refuse the classic billion-laughs shape, but a document of a
// few kilobytes whose anchors nest a few levels deep still expands to
// gigabytes before they notice. No manifest comes near this many nodes: a
// Rollout with its status is a few hundred.
const MaxExpandedNodes = 1_000_000

// checkAliases refuses a document whose aliases expand beyond
// MaxExpandedNodes. It parses into yaml.v3's node tree, which keeps aliases
// as references, and counts the expanded size with one count per anchor, so
// the check itself is linear in the document.
func checkAliases(body []byte) error {
	// Anchors are rare in manifests: skip the extra parse when there is
	// nothing to expand.
	if bytes.IndexByte(body, '&') < 0 || bytes.IndexByte(body, '*') < 0 {
		return nil
	}
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(body, &root); err != nil {
		return nil // the decoder reports syntax errors with their line
	}
	memo := map[*yamlv3.Node]int{}
	if n := expanded(&root, memo, 0); n > MaxExpandedNodes {
		return fmt.Errorf("YAML aliases expand this document to more than %d nodes: refusing it (anchors that reference each other nest too deep)", MaxExpandedNodes)
	}
	return nil
}

// expanded counts the nodes n stands for once every alias is replaced by
// what it references, saturating just above MaxExpandedNodes. depth stops a
// cycle (an anchor that contains an alias to itself).
func expanded(n *yamlv3.Node, memo map[*yamlv3.Node]int, depth int) int {
	if n == nil {
		return 0
	}
	if c, ok := memo[n]; ok {
		return c
	}
	if depth > 1000 {
		return MaxExpandedNodes + 1
	}
	total := 1
	if n.Kind == yamlv3.AliasNode {
		total = expanded(n.Alias, memo, depth+1)
	} else {
		for _, c := range n.Content {
			total += expanded(c, memo, depth+1)
			if total > MaxExpandedNodes {
				total = MaxExpandedNodes + 1
				break
			}
		}
	}
	memo[n] = total
	return total
}
