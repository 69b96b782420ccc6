package snapshot

import (
	"bytes"
	"encoding/json"
)

// minSplitItems is the List size from which its items are decoded one by
// one, in parallel: a snapshot of a Rollout with thousands of pods is one
// List document of several MB, and YAML decoding is most of reading it.
var minSplitItems = 32

// splitList cuts a YAML List document laid out as kubectl and `snapshot`
// write it — `items:` at column 0, each item starting with "- " at column 0
// — into the document without its items and one document per item, each
// with its first line. It declines (ok false) for anything else: another
// layout, a flow sequence, or anchors and aliases, which may cross items.
func splitList(doc document) (rest document, items []document, ok bool) {
	body := doc.body
	if !bytes.Contains(body, []byte("\nitems:\n")) && !bytes.HasPrefix(body, []byte("items:\n")) {
		return document{}, nil, false
	}
	for _, a := range [][]byte{[]byte(": &"), []byte("- &"), []byte(": *"), []byte("- *")} {
		if bytes.Contains(body, a) {
			return document{}, nil, false
		}
	}
	var restBody bytes.Buffer
	inItems := false
	var cur *bytes.Buffer
	curLine := 0
	flush := func() {
		if cur != nil {
			items = append(items, document{body: cur.Bytes(), line: curLine})
			cur = nil
		}
	}
	line := doc.line
	for pos := 0; pos < len(body); line++ {
		end := bytes.IndexByte(body[pos:], '\n')
		next := len(body)
		if end >= 0 {
			next = pos + end + 1
		}
		l := body[pos:next]
		pos = next
		col0 := len(l) > 0 && l[0] != ' ' && l[0] != '\t' && l[0] != '\n' && l[0] != '#'
		switch {
		case !inItems && bytes.Equal(bytes.TrimRight(l, " \r\n"), []byte("items:")):
			inItems = true
			restBody.WriteByte('\n') // keep the rest's line numbers
		case inItems && bytes.HasPrefix(l, []byte("- ")):
			flush()
			cur, curLine = &bytes.Buffer{}, line
			cur.WriteString("  ")
			cur.Write(l[2:])
			restBody.WriteByte('\n')
		case inItems && col0:
			// A top-level key after the items (kind: List at the end).
			flush()
			inItems = false
			restBody.Write(l)
		case inItems && cur != nil:
			cur.Write(l)
			restBody.WriteByte('\n')
		default:
			restBody.Write(l)
		}
	}
	flush()
	if len(items) < minSplitItems {
		return document{}, nil, false
	}
	return document{body: restBody.Bytes(), line: doc.line}, items, true
}

// splitJSONList is splitList for a JSON List (`kubectl get -o json`, a
// `snapshot`): one pass of the JSON tokenizer cuts out each item's bytes and
// line, and the rest of the object is rebuilt without them. It declines for
// anything that is not a JSON object with an items array of at least
// minSplitItems elements.
func splitJSONList(doc document) (rest document, items []document, ok bool) {
	body := doc.body
	t := bytes.TrimLeft(body, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return document{}, nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return document{}, nil, false
	}
	line, seen := doc.line, 0
	lineAt := func(off int) int {
		line += bytes.Count(body[seen:off], []byte{'\n'})
		seen = off
		return line
	}
	others := map[string]json.RawMessage{}
	found := false
	for dec.More() {
		key, err := dec.Token()
		k, isString := key.(string)
		if err != nil || !isString {
			return document{}, nil, false
		}
		if k != "items" || found {
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return document{}, nil, false
			}
			others[k] = raw
			continue
		}
		found = true
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return document{}, nil, false
		}
		for dec.More() {
			off := int(dec.InputOffset())
			for off < len(body) && (body[off] == ' ' || body[off] == '\t' || body[off] == '\r' || body[off] == '\n' || body[off] == ',') {
				off++
			}
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return document{}, nil, false
			}
			items = append(items, document{body: raw, line: lineAt(off)})
		}
		if _, err := dec.Token(); err != nil { // ]
			return document{}, nil, false
		}
	}
	if !found || len(items) < minSplitItems {
		return document{}, nil, false
	}
	restBody, err := json.Marshal(others)
	if err != nil {
		return document{}, nil, false
	}
	return document{body: restBody, line: doc.line}, items, true
}
