package rest

import (
	"html"
	"html/template"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// docsPage is what docs.html shows: the document turned into plain lists,
// so that the template only loops.
type docsPage struct {
	Title, Version string
	Intro          template.HTML
	Style          template.CSS
	Schemes        []schemeView
	Groups         []groupView
	Errors         []sharedResponse
	Headers        []field
	Schemas        []schemaView
}

type schemeView struct {
	Name, Type, In, Param string
	Description           template.HTML
}

type groupView struct {
	ID, Name    string
	Description template.HTML
	Ops         []opView
}

type opView struct {
	ID, Method, Path, Summary string
	Deprecated                bool
	Description, Auth         template.HTML
	Params                    []field
	Body                      *bodyView
	Responses                 []responseView
	Errors                    []link // responses described once, under Errors
	Curl                      string
}

type responseView struct {
	Status      string
	Description template.HTML
	Headers     []link
	Bodies      []bodyView
}

type sharedResponse struct {
	ID, Name    string
	Statuses    []string // under which operations give it
	Description template.HTML
	Headers     []link
	Bodies      []bodyView
}

type bodyView struct {
	Description template.HTML
	Required    bool
	MediaType   string
	Type        template.HTML
	Fields      []field
	Example     string
}

type schemaView struct {
	ID, Name    string
	Description template.HTML
	Type        template.HTML
	Fields      []field
	Example     string
}

type link struct{ ID, Text, Title string }

// field is one row of a parameter, header or property list. Nested
// properties carry their path in Prefix (`transaction.`, `tags[].`).
type field struct {
	ID, Prefix, Name, In                            string
	Type                                            template.HTML
	Required, Nullable, ReadOnly, WriteOnly, Deprec bool
	Description                                     template.HTML
	Notes                                           []template.HTML
}

// viewer builds the page from one document.
type viewer struct {
	doc *apiDoc
	// headerNames maps a component header to the name responses send it
	// under, which only the responses know.
	headerNames map[string]string
	// statuses maps a component response to the statuses it answers.
	statuses map[string][]string
}

func buildDocsPage(d *apiDoc) docsPage {
	v := &viewer{doc: d, headerNames: map[string]string{}, statuses: map[string][]string{}}
	p := docsPage{Title: d.Info.Title, Version: d.Info.Version, Intro: markdown(d.Info.Description)}
	for _, s := range d.Components.SecuritySchemes {
		p.Schemes = append(p.Schemes, schemeView{Name: s.Name, Type: s.Value.Type, In: s.Value.In, Param: s.Value.Name,
			Description: markdown(s.Value.Description)})
	}
	groups := map[string]*groupView{}
	var order []string
	group := func(name string) *groupView {
		if g, ok := groups[name]; ok {
			return g
		}
		g := &groupView{ID: "tag-" + anchor(name), Name: name}
		groups[name] = g
		order = append(order, name)
		return g
	}
	for _, t := range d.Tags {
		group(t.Name).Description = markdown(t.Description)
	}
	for _, path := range d.Paths {
		for _, op := range path.Value.Operations {
			tag := "Other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			g := group(tag)
			g.Ops = append(g.Ops, v.operation(path.Name, path.Value, op))
		}
	}
	for _, name := range order {
		if g := groups[name]; len(g.Ops) > 0 {
			p.Groups = append(p.Groups, *g)
		}
	}
	for _, r := range d.Components.Responses {
		s := sharedResponse{ID: "response-" + anchor(r.Name), Name: r.Name, Statuses: v.statuses[r.Name], Description: markdown(r.Value.Description),
			Headers: v.headerLinks(r.Value.Headers)}
		for _, c := range r.Value.Content {
			s.Bodies = append(s.Bodies, v.body(c.Name, c.Value, false))
		}
		p.Errors = append(p.Errors, s)
	}
	for _, h := range d.Components.Headers {
		name := v.headerNames[h.Name]
		if name == "" {
			name = h.Name
		}
		f := v.field(name, h.Value.Schema, h.Value.Description)
		f.ID = "header-" + anchor(h.Name)
		p.Headers = append(p.Headers, f)
	}
	for _, s := range d.Components.Schemas {
		sv := schemaView{ID: "schema-" + anchor(s.Name), Name: s.Name, Description: markdown(s.Value.Description),
			Fields: v.fields(s.Value, "", 0, map[string]bool{s.Name: true}, 0), Example: v.exampleJSON(s.Value, false)}
		if !v.objectish(s.Value) {
			sv.Type = v.typeOf(s.Value)
		}
		p.Schemas = append(p.Schemas, sv)
	}
	return p
}

func (v *viewer) operation(path string, item *pathItem, op *operation) opView {
	o := opView{ID: op.OperationID, Method: strings.ToUpper(op.Method), Path: path, Summary: op.Summary,
		Deprecated: op.Deprecated, Description: markdown(op.Description), Auth: v.auth(op)}
	if o.ID == "" {
		o.ID = anchor(op.Method + path)
	}
	// Operation parameters override the path's of the same name and place.
	params := append([]*parameter{}, item.Parameters...)
	for _, p := range op.Parameters {
		rp := v.parameter(p)
		for i, q := range params {
			if q = v.parameter(q); q.Name == rp.Name && q.In == rp.In {
				params = append(params[:i], params[i+1:]...)
				break
			}
		}
		params = append(params, p)
	}
	for _, p := range params {
		p = v.parameter(p)
		f := v.field(p.Name, p.Schema, p.Description)
		f.In, f.Required, f.Deprec = p.In, p.Required, p.Deprecated
		if p.Example != nil {
			f.Notes = append(f.Notes, note("example", scalarText(p.Example.Node)))
		}
		o.Params = append(o.Params, f)
	}
	var example string
	if rb := op.RequestBody; rb != nil {
		for _, c := range rb.Content {
			b := v.body(c.Name, c.Value, true)
			b.Description, b.Required = markdown(rb.Description), rb.Required
			// The curl command carries the example.
			example, b.Example = b.Example, ""
			o.Body = &b
			break // the API takes JSON only
		}
	}
	for _, r := range op.Responses {
		if r.Value.Ref != "" {
			name := refName(r.Value.Ref)
			if !slices.Contains(v.statuses[name], r.Name) {
				v.statuses[name] = append(v.statuses[name], r.Name)
			}
			o.Errors = append(o.Errors, link{ID: "response-" + anchor(name), Text: r.Name, Title: name})
			continue
		}
		rv := responseView{Status: r.Name, Description: markdown(r.Value.Description), Headers: v.headerLinks(r.Value.Headers)}
		for _, c := range r.Value.Content {
			rv.Bodies = append(rv.Bodies, v.body(c.Name, c.Value, false))
		}
		o.Responses = append(o.Responses, rv)
	}
	o.Curl = v.curl(op, path, example)
	return o
}

// auth says what an operation needs. Key scopes are coffer's rule, stated
// in the scheme's description: read keys may only GET.
func (v *viewer) auth(op *operation) template.HTML {
	reqs := v.doc.Security
	if op.Security != nil {
		reqs = *op.Security
	}
	if len(reqs) == 0 {
		return "No API key needed."
	}
	var ways []string
	for _, req := range reqs {
		for name := range req {
			s, ok := v.doc.Components.SecuritySchemes.get(name)
			if ok && s.Type == "apiKey" {
				ways = append(ways, "an API key in the <code>"+html.EscapeString(s.Name)+"</code> "+html.EscapeString(s.In))
			} else {
				ways = append(ways, html.EscapeString(name))
			}
		}
	}
	scope := "<code>read_write</code>"
	if op.Method == "get" || op.Method == "head" {
		scope = "<code>read</code> or <code>read_write</code>"
	}
	return template.HTML("Needs " + strings.Join(ways, " or ") + ", of scope " + scope + ".")
}

func (v *viewer) curl(op *operation, path, example string) string {
	var b strings.Builder
	b.WriteString("curl")
	if op.Method != "get" {
		b.WriteString(" -X " + strings.ToUpper(op.Method))
	}
	b.WriteString(` "$COFFER_URL` + path + `"`)
	if op.Security == nil || len(*op.Security) > 0 {
		b.WriteString(` -H "X-Api-Key: $COFFER_API_KEY"`)
	}
	if example != "" {
		b.WriteString(" -H \"Content-Type: application/json\" -d @- <<'JSON'\n" + example + "\nJSON")
	}
	return b.String()
}

func (v *viewer) parameter(p *parameter) *parameter {
	if p.Ref != "" {
		if c, ok := v.doc.Components.Parameters.get(refName(p.Ref)); ok {
			return c
		}
	}
	return p
}

func (v *viewer) headerLinks(hs ordered[*header]) []link {
	var out []link
	for _, h := range hs {
		if h.Value.Ref == "" {
			out = append(out, link{Text: h.Name})
			continue
		}
		ref := refName(h.Value.Ref)
		if v.headerNames[ref] == "" {
			v.headerNames[ref] = h.Name
		}
		out = append(out, link{ID: "header-" + anchor(ref), Text: h.Name})
	}
	return out
}

// body describes a request or response body. A request body lists its
// fields, with the schemas it references one level deep, since that is
// what a client writes. A response that is a component schema shows its
// name and an example and leaves the fields to the schema's own entry:
// listing Transaction under each of its ten operations would make the
// page ten times longer.
func (v *viewer) body(mediaType string, m *mediaType, request bool) bodyView {
	b := bodyView{MediaType: mediaType}
	if m.Schema != nil {
		b.Type = v.typeOf(m.Schema)
		top, name := v.resolve(m.Schema)
		prefix := ""
		if top.Type == "array" && top.Items != nil {
			top, prefix = top.Items, "[]."
		}
		switch {
		case request:
			b.Fields = v.fields(top, prefix, 0, map[string]bool{name: name != ""}, 1)
		case name == "" && top.Ref == "":
			b.Fields = v.fields(top, prefix, 0, map[string]bool{}, 0)
		}
	}
	if m.Example != nil {
		b.Example = jsonText(m.Example.Node)
	} else if m.Schema != nil && mediaType == "application/json" {
		b.Example = v.exampleJSON(m.Schema, request)
	}
	return b
}

// resolve follows a schema's reference; name is the component's name, or
// "" for an inline schema.
func (v *viewer) resolve(s *schema) (*schema, string) {
	if s == nil || s.Ref == "" {
		return s, ""
	}
	name := refName(s.Ref)
	c, _ := v.doc.Components.Schemas.get(name)
	return c, name
}

// members lists an object's properties, those of its allOf parts
// included, and which are required.
func (v *viewer) members(s *schema, seen map[string]bool) (ordered[*schema], map[string]bool) {
	s, _ = v.resolve(s)
	if s == nil {
		return nil, nil
	}
	props, required := ordered[*schema]{}, map[string]bool{}
	for _, part := range s.AllOf {
		_, n := v.resolve(part)
		if n != "" && seen[n] {
			continue
		}
		seen[n] = true
		p, r := v.members(part, seen)
		delete(seen, n)
		props = append(props, p...)
		for k := range r {
			required[k] = true
		}
	}
	props = append(props, s.Properties...)
	for _, k := range s.Required {
		required[k] = true
	}
	return props, required
}

func (v *viewer) objectish(s *schema) bool {
	s, _ = v.resolve(s)
	return s != nil && (len(s.Properties) > 0 || len(s.AllOf) > 0)
}

// fields lists an object's properties and, below each, the properties of
// the objects it holds: inline objects always, referenced ones while
// refs allows (each level of reference uses one), and never a schema
// already being listed, so recursive schemas end.
func (v *viewer) fields(s *schema, prefix string, depth int, seen map[string]bool, refs int) []field {
	props, required := v.members(s, seen)
	var out []field
	for _, p := range props {
		f := v.field(p.Name, p.Value, p.Value.Description)
		f.Prefix, f.Required = prefix, required[p.Name]
		out = append(out, f)
		if depth >= 8 {
			continue
		}
		inner, path := p.Value, prefix+p.Name+"."
		if r, _ := v.resolve(inner); r != nil && r.Type == "array" && r.Items != nil {
			inner, path = r.Items, prefix+p.Name+"[]."
		}
		if !v.objectish(inner) {
			continue
		}
		_, name := v.resolve(inner)
		switch {
		case name == "":
			out = append(out, v.fields(inner, path, depth+1, seen, refs)...)
		case refs > 0 && !seen[name]:
			seen[name] = true
			out = append(out, v.fields(inner, path, depth+1, seen, refs-1)...)
			delete(seen, name)
		}
	}
	return out
}

func (v *viewer) field(name string, s *schema, description string) field {
	f := field{Name: name, Type: v.typeOf(s)}
	r, _ := v.resolve(s)
	if r == nil {
		return f
	}
	if description == "" {
		description = r.Description
	}
	f.Description = markdown(description)
	f.Nullable = s.Nullable || r.Nullable
	f.ReadOnly, f.WriteOnly, f.Deprec = r.ReadOnly, r.WriteOnly, s.Deprecated || r.Deprecated
	f.Notes = v.notes(r)
	return f
}

// notes are a schema's constraints, in words.
func (v *viewer) notes(s *schema) []template.HTML {
	var out []template.HTML
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			vals[i] = "<code>" + html.EscapeString(scalarText(e.Node)) + "</code>"
		}
		out = append(out, template.HTML("one of "+strings.Join(vals, ", ")))
	}
	if s.Default != nil {
		out = append(out, note("default", scalarText(s.Default.Node)))
	}
	bound := func(label string, f *float64) {
		if f != nil {
			out = append(out, template.HTML(label+" "+strconv.FormatFloat(*f, 'f', -1, 64)))
		}
	}
	bound("minimum", s.Minimum)
	bound("maximum", s.Maximum)
	count := func(label string, n *int, unit string) {
		if n != nil {
			out = append(out, template.HTML(label+" "+strconv.Itoa(*n)+" "+unit))
		}
	}
	count("at least", s.MinLength, "characters")
	count("at most", s.MaxLength, "characters")
	count("at least", s.MinItems, "items")
	count("at most", s.MaxItems, "items")
	if s.Pattern != "" {
		out = append(out, note("pattern", s.Pattern))
	}
	if s.Example != nil && s.Example.Kind == yaml.ScalarNode {
		out = append(out, note("example", scalarText(s.Example.Node)))
	}
	return out
}

func note(label, value string) template.HTML {
	return template.HTML(label + " <code>" + html.EscapeString(value) + "</code>")
}

// typeOf names a schema's type, with links to the component schemas it
// uses.
func (v *viewer) typeOf(s *schema) template.HTML {
	if s == nil {
		return "any"
	}
	if s.Ref != "" {
		name := html.EscapeString(refName(s.Ref))
		return template.HTML(`<a href="#schema-` + anchor(refName(s.Ref)) + `">` + name + `</a>`)
	}
	alts := func(list []*schema) template.HTML {
		parts := make([]string, len(list))
		for i, x := range list {
			parts[i] = string(v.typeOf(x))
		}
		return template.HTML(strings.Join(parts, " or "))
	}
	switch {
	case len(s.OneOf) > 0:
		return alts(s.OneOf)
	case len(s.AnyOf) > 0:
		return alts(s.AnyOf)
	case len(s.AllOf) == 1 && len(s.Properties) == 0:
		return v.typeOf(s.AllOf[0])
	case s.Type == "array" && s.Items != nil:
		return "array of " + v.typeOf(s.Items)
	case s.AdditionalProperties.Schema != nil && len(s.Properties) == 0:
		return "map of string to " + v.typeOf(s.AdditionalProperties.Schema)
	case s.Type != "" && s.Format != "":
		return template.HTML(html.EscapeString(s.Type) + " (" + html.EscapeString(s.Format) + ")")
	case s.Type != "":
		return template.HTML(html.EscapeString(s.Type))
	case len(s.Properties) > 0 || len(s.AllOf) > 0:
		return "object"
	}
	return "any"
}

var notAnchor = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// anchor makes a name safe as a fragment id.
func anchor(name string) string {
	return strings.Trim(notAnchor.ReplaceAllString(name, "-"), "-")
}
