package rest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// exampleJSON is an example body for a schema: the document's own example
// where it gives one, else one made from its properties' examples and
// types, in the document's order. A request's example keeps to the
// properties that are required or have examples of their own: a made-up
// value for every optional member would be a body nobody should send.
func (v *viewer) exampleJSON(s *schema, request bool) string {
	n := v.example(s, map[string]bool{}, !request)
	if n == nil && request {
		n = v.example(s, map[string]bool{}, true)
	}
	if n == nil {
		return ""
	}
	return jsonText(n)
}

// example makes a YAML node tree for a schema. With fill false, only the
// document's examples and the required members make it; nil leaves the
// value out (nothing to show, or a recursive reference).
func (v *viewer) example(s *schema, seen map[string]bool, fill bool) *yaml.Node {
	s, name := v.resolve(s)
	if s == nil || seen[name] && name != "" {
		return nil
	}
	if s.Example != nil {
		return s.Example.Node
	}
	seen[name] = true
	defer delete(seen, name)
	switch {
	case len(s.OneOf) > 0:
		return v.example(s.OneOf[0], seen, fill)
	case len(s.AnyOf) > 0:
		return v.example(s.AnyOf[0], seen, fill)
	case v.objectish(s):
		props, required := v.members(s, seen)
		m := &yaml.Node{Kind: yaml.MappingNode}
		for _, p := range props {
			if x := v.example(p.Value, seen, fill || required[p.Name]); x != nil {
				m.Content = append(m.Content, scalar("!!str", p.Name), x)
			}
		}
		if len(m.Content) == 0 && !fill {
			return nil
		}
		return m
	case s.Type == "array":
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		if x := v.example(s.Items, seen, fill); x != nil {
			seq.Content = append(seq.Content, x)
		}
		if len(seq.Content) == 0 && !fill {
			return nil
		}
		return seq
	case !fill:
		return nil
	case s.Default != nil:
		return s.Default.Node
	case len(s.Enum) > 0:
		return s.Enum[0].Node
	}
	switch s.Type {
	case "object":
		return &yaml.Node{Kind: yaml.MappingNode}
	case "integer", "number":
		if s.Minimum != nil {
			return scalar("!!float", strconv.FormatFloat(*s.Minimum, 'f', -1, 64))
		}
		return scalar("!!int", "0")
	case "boolean":
		return scalar("!!bool", "true")
	}
	switch s.Format {
	case "uuid":
		return scalar("!!str", "0195f2d4-0000-7a3b-9d2f-4e5a6b7c8d9e")
	case "date":
		return scalar("!!str", "2026-01-15")
	case "date-time":
		return scalar("!!str", "2026-01-15T10:30:00Z")
	}
	return scalar("!!str", "string")
}

func scalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

// jsonText writes a YAML value as indented JSON, keeping the order of its
// keys.
func jsonText(n *yaml.Node) string {
	var b strings.Builder
	writeJSON(&b, n, "")
	return b.String()
}

func writeJSON(b *strings.Builder, n *yaml.Node, indent string) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			writeJSON(b, n.Content[0], indent)
		}
	case yaml.AliasNode:
		writeJSON(b, n.Alias, indent)
	case yaml.MappingNode, yaml.SequenceNode:
		open, end, step := "[", "]", 1
		if n.Kind == yaml.MappingNode {
			open, end, step = "{", "}", 2
		}
		if len(n.Content) == 0 {
			b.WriteString(open + end)
			return
		}
		b.WriteString(open + "\n")
		for i := 0; i+step-1 < len(n.Content); i += step {
			b.WriteString(indent + "  ")
			if step == 2 {
				b.WriteString(jsonString(n.Content[i].Value) + ": ")
			}
			writeJSON(b, n.Content[i+step-1], indent+"  ")
			if i+step < len(n.Content) {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + end)
	default:
		b.WriteString(scalarJSON(n))
	}
}

// scalarJSON is a YAML scalar as a JSON literal: numbers, booleans and
// null as such, anything else a string.
func scalarJSON(n *yaml.Node) string {
	switch n.ShortTag() {
	case "!!null":
		return "null"
	case "!!bool":
		if v, err := strconv.ParseBool(n.Value); err == nil {
			return strconv.FormatBool(v)
		}
	case "!!int", "!!float":
		if json.Valid([]byte(n.Value)) {
			return n.Value
		}
	}
	return jsonString(n.Value)
}

// scalarText is a value as it reads in a sentence: JSON for anything but
// a plain string.
func scalarText(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		return n.Value
	}
	return strings.Join(strings.Fields(jsonText(n)), " ")
}

func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the template escapes the page
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
