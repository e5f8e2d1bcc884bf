package rest

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The part of OpenAPI 3.0 that openapi.yaml uses, read from the YAML rather
// than the JSON so that the reference lists paths, properties and
// responses in the order their authors chose (the JSON is sorted).

type apiDoc struct {
	Info struct {
		Title       string `yaml:"title"`
		Version     string `yaml:"version"`
		Description string `yaml:"description"`
	} `yaml:"info"`
	Tags []struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
	} `yaml:"tags"`
	Security   []map[string][]string `yaml:"security"`
	Paths      ordered[*pathItem]    `yaml:"paths"`
	Components struct {
		Schemas         ordered[*schema]         `yaml:"schemas"`
		Responses       ordered[*response]       `yaml:"responses"`
		Parameters      ordered[*parameter]      `yaml:"parameters"`
		Headers         ordered[*header]         `yaml:"headers"`
		SecuritySchemes ordered[*securityScheme] `yaml:"securitySchemes"`
	} `yaml:"components"`
}

// ordered is a YAML mapping kept in the document's order.
type ordered[T any] []entry[T]

type entry[T any] struct {
	Name  string
	Value T
}

func (o *ordered[T]) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a mapping", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		var v T
		if err := n.Content[i+1].Decode(&v); err != nil {
			return err
		}
		*o = append(*o, entry[T]{Name: n.Content[i].Value, Value: v})
	}
	return nil
}

func (o ordered[T]) get(name string) (T, bool) {
	for _, e := range o {
		if e.Name == name {
			return e.Value, true
		}
	}
	var zero T
	return zero, false
}

// pathItem holds a path's shared parameters and its operations in the
// document's order.
type pathItem struct {
	Parameters []*parameter
	Operations []*operation
}

var httpMethods = map[string]bool{"get": true, "put": true, "post": true, "delete": true, "options": true, "head": true, "patch": true, "trace": true}

func (p *pathItem) UnmarshalYAML(n *yaml.Node) error {
	var item ordered[*raw]
	if err := item.UnmarshalYAML(n); err != nil {
		return err
	}
	for _, e := range item {
		switch {
		case e.Name == "parameters":
			if err := e.Value.Decode(&p.Parameters); err != nil {
				return err
			}
		case httpMethods[e.Name]:
			op := &operation{Method: e.Name}
			if err := e.Value.Decode(op); err != nil {
				return err
			}
			p.Operations = append(p.Operations, op)
		}
	}
	return nil
}

type operation struct {
	Method      string                 `yaml:"-"`
	Tags        []string               `yaml:"tags"`
	OperationID string                 `yaml:"operationId"`
	Summary     string                 `yaml:"summary"`
	Description string                 `yaml:"description"`
	Deprecated  bool                   `yaml:"deprecated"`
	Parameters  []*parameter           `yaml:"parameters"`
	RequestBody *requestBody           `yaml:"requestBody"`
	Responses   ordered[*response]     `yaml:"responses"`
	Security    *[]map[string][]string `yaml:"security"` // nil: the document's; empty: none
}

type parameter struct {
	Ref         string  `yaml:"$ref"`
	Name        string  `yaml:"name"`
	In          string  `yaml:"in"`
	Description string  `yaml:"description"`
	Required    bool    `yaml:"required"`
	Deprecated  bool    `yaml:"deprecated"`
	Schema      *schema `yaml:"schema"`
	Example     *raw    `yaml:"example"`
}

type requestBody struct {
	Ref         string              `yaml:"$ref"`
	Description string              `yaml:"description"`
	Required    bool                `yaml:"required"`
	Content     ordered[*mediaType] `yaml:"content"`
}

type mediaType struct {
	Schema  *schema `yaml:"schema"`
	Example *raw    `yaml:"example"`
}

type response struct {
	Ref         string              `yaml:"$ref"`
	Description string              `yaml:"description"`
	Headers     ordered[*header]    `yaml:"headers"`
	Content     ordered[*mediaType] `yaml:"content"`
}

type header struct {
	Ref         string  `yaml:"$ref"`
	Description string  `yaml:"description"`
	Schema      *schema `yaml:"schema"`
}

type securityScheme struct {
	Type        string `yaml:"type"`
	Description string `yaml:"description"`
	Name        string `yaml:"name"`
	In          string `yaml:"in"`
	Scheme      string `yaml:"scheme"`
}

type schema struct {
	Ref                  string           `yaml:"$ref"`
	Type                 string           `yaml:"type"`
	Format               string           `yaml:"format"`
	Title                string           `yaml:"title"`
	Description          string           `yaml:"description"`
	Nullable             bool             `yaml:"nullable"`
	ReadOnly             bool             `yaml:"readOnly"`
	WriteOnly            bool             `yaml:"writeOnly"`
	Deprecated           bool             `yaml:"deprecated"`
	Enum                 []*raw           `yaml:"enum"`
	Default              *raw             `yaml:"default"`
	Example              *raw             `yaml:"example"`
	Pattern              string           `yaml:"pattern"`
	Minimum              *float64         `yaml:"minimum"`
	Maximum              *float64         `yaml:"maximum"`
	MinLength            *int             `yaml:"minLength"`
	MaxLength            *int             `yaml:"maxLength"`
	MinItems             *int             `yaml:"minItems"`
	MaxItems             *int             `yaml:"maxItems"`
	Items                *schema          `yaml:"items"`
	Properties           ordered[*schema] `yaml:"properties"`
	Required             []string         `yaml:"required"`
	AdditionalProperties additional       `yaml:"additionalProperties"`
	AllOf                []*schema        `yaml:"allOf"`
	OneOf                []*schema        `yaml:"oneOf"`
	AnyOf                []*schema        `yaml:"anyOf"`
}

// raw is a value kept as its YAML node, so that examples come out with
// their keys in the document's order.
type raw struct{ *yaml.Node }

func (r *raw) UnmarshalYAML(n *yaml.Node) error {
	r.Node = n
	return nil
}

// additional is additionalProperties: a schema for the values of a map,
// or a boolean, which the reference does not need.
type additional struct{ Schema *schema }

func (a *additional) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	a.Schema = new(schema)
	return n.Decode(a.Schema)
}

// refName is the last segment of a local reference such as
// #/components/schemas/Transaction.
func refName(ref string) string { return ref[strings.LastIndexByte(ref, '/')+1:] }

// loadDoc reads the document and checks that every local reference it
// makes names something, so that rendering can follow them blindly.
func loadDoc(src []byte) (*apiDoc, error) {
	var d apiDoc
	if err := yaml.Unmarshal(src, &d); err != nil {
		return nil, fmt.Errorf("rest: read openapi.yaml: %w", err)
	}
	var bad []string
	check := func(ref, kind string, ok bool) {
		if ref != "" && (!strings.HasPrefix(ref, "#/components/"+kind+"/") || !ok) {
			bad = append(bad, ref)
		}
	}
	var walk func(s *schema)
	walk = func(s *schema) {
		if s == nil {
			return
		}
		_, ok := d.Components.Schemas.get(refName(s.Ref))
		check(s.Ref, "schemas", ok)
		walk(s.Items)
		walk(s.AdditionalProperties.Schema)
		for _, p := range s.Properties {
			walk(p.Value)
		}
		for _, list := range [][]*schema{s.AllOf, s.OneOf, s.AnyOf} {
			for _, x := range list {
				walk(x)
			}
		}
	}
	params := func(ps []*parameter) {
		for _, p := range ps {
			_, ok := d.Components.Parameters.get(refName(p.Ref))
			check(p.Ref, "parameters", ok)
			walk(p.Schema)
		}
	}
	headers := func(hs ordered[*header]) {
		for _, h := range hs {
			_, ok := d.Components.Headers.get(refName(h.Value.Ref))
			check(h.Value.Ref, "headers", ok)
			walk(h.Value.Schema)
		}
	}
	content := func(c ordered[*mediaType]) {
		for _, m := range c {
			walk(m.Value.Schema)
		}
	}
	for _, s := range d.Components.Schemas {
		walk(s.Value)
	}
	for _, p := range d.Components.Parameters {
		walk(p.Value.Schema)
	}
	for _, h := range d.Components.Headers {
		walk(h.Value.Schema)
	}
	for _, r := range d.Components.Responses {
		headers(r.Value.Headers)
		content(r.Value.Content)
	}
	for _, p := range d.Paths {
		params(p.Value.Parameters)
		for _, op := range p.Value.Operations {
			params(op.Parameters)
			if op.RequestBody != nil {
				check(op.RequestBody.Ref, "requestBodies", false)
				content(op.RequestBody.Content)
			}
			for _, r := range op.Responses {
				_, ok := d.Components.Responses.get(refName(r.Value.Ref))
				check(r.Value.Ref, "responses", ok)
				headers(r.Value.Headers)
				content(r.Value.Content)
			}
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("rest: openapi.yaml: unresolved references: %s", strings.Join(bad, ", "))
	}
	return &d, nil
}
