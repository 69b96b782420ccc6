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
// `snapshot`): one pass over the bytes cuts out each item's bytes and line,
// and the rest of the object is rebuilt without them. It declines for
// anything that is not a JSON object with an items array of at least
// minSplitItems elements, or whose structure between the items is not
// JSON: the whole document is then decoded, and its error reported.
//
// The pass only finds where each value ends (strings, nesting); it does
// not validate the items, which are decoded one by one afterwards, and
// that decoding rejects what is malformed inside an item. Tokenizing the
// whole List for this was a sixth of a `diagnose -f` of 2,000 pods, on one
// core while the items' decoding uses all.
func splitJSONList(doc document) (rest document, items []document, ok bool) {
	body := doc.body
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
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
	i = skipSpace(body, i+1)
	for i < len(body) && body[i] != '}' {
		end := skipValue(body, i)
		if end < 0 || body[i] != '"' {
			return document{}, nil, false
		}
		var k string
		if json.Unmarshal(body[i:end], &k) != nil {
			return document{}, nil, false
		}
		i = skipSpace(body, end)
		if i >= len(body) || body[i] != ':' {
			return document{}, nil, false
		}
		i = skipSpace(body, i+1)
		if k == "items" && found {
			return document{}, nil, false // the whole document's decoding keeps the last
		}
		if k != "items" {
			end := skipValue(body, i)
			if end < 0 {
				return document{}, nil, false
			}
			others[k] = body[i:end]
			i = end
		} else {
			found = true
			if i >= len(body) || body[i] != '[' {
				return document{}, nil, false
			}
			i = skipSpace(body, i+1)
			for i < len(body) && body[i] != ']' {
				end := skipValue(body, i)
				if end < 0 {
					return document{}, nil, false
				}
				items = append(items, document{body: body[i:end], line: lineAt(i)})
				i = skipSpace(body, end)
				if i < len(body) && body[i] == ',' {
					i = skipSpace(body, i+1)
					if i < len(body) && body[i] == ']' {
						return document{}, nil, false // a trailing comma
					}
				} else if i >= len(body) || body[i] != ']' {
					return document{}, nil, false
				}
			}
			if i >= len(body) {
				return document{}, nil, false
			}
			i++ // ]
		}
		i = skipSpace(body, i)
		if i < len(body) && body[i] == ',' {
			i = skipSpace(body, i+1)
			if i < len(body) && body[i] == '}' {
				return document{}, nil, false
			}
		} else if i >= len(body) || body[i] != '}' {
			return document{}, nil, false
		}
	}
	if i >= len(body) || skipSpace(body, i+1) != len(body) || !found || len(items) < minSplitItems {
		return document{}, nil, false
	}
	// Marshal validates (and compacts) the other members' values.
	restBody, err := json.Marshal(others)
	if err != nil {
		return document{}, nil, false
	}
	return document{body: restBody, line: doc.line}, items, true
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipValue returns the index just after the JSON value that starts at i:
// a string, an object or array (brackets matched outside strings), or a
// literal or number (up to the next delimiter). It returns -1 where no
// value can end: an unterminated string or unbalanced brackets.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		var buf [32]byte
		stack := buf[:0]
		for i < len(b) {
			switch c := b[i]; c {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				stack = append(stack, c)
			case '}', ']':
				if len(stack) == 0 || (c == '}') != (stack[len(stack)-1] == '{') {
					return -1
				}
				if stack = stack[:len(stack)-1]; len(stack) == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	case ',', ':', '}', ']':
		return -1
	}
	start := i
	for ; i < len(b); i++ {
		if c := b[i]; c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			break
		}
	}
	if i == start {
		return -1
	}
	return i
}

// skipString returns the index just after the string whose opening quote
// is at i, or -1 if it does not end.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}
