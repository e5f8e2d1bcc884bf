package rest

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// OpenAPIYAML is the machine-readable description of /api/v1, the source
// that people edit. The test suite validates every response against it.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte

// OpenAPIJSON is the same document as JSON, generated from OpenAPIYAML by
// `go test ./api/rest -run TestOpenAPIJSON -update-openapi` and checked to match
// it by the same test, so the server needs no OpenAPI library.
//
//go:embed openapi.json
var OpenAPIJSON []byte

var (
	//go:embed docs.html
	docsTemplate string
	//go:embed docs.css
	docsCSS string
)

func (h *Handler) openAPIJSON(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Send(OpenAPIJSON)
}

func (h *Handler) openAPIYAML(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, "application/yaml; charset=utf-8")
	return c.Send(OpenAPIYAML)
}

// docs is the API reference: the document rendered once, on the first
// request for it, into one HTML page with no script, so it reads on any
// browser and offline. Not at start: reading the document allocates about
// 15 MB, which a web process that never serves the page would keep as
// resident heap (issue 16). TestAPIDocs renders it.
type docs struct {
	page []byte
	gz   []byte // the page gzipped: about a twelfth of its size
	csp  string
}

func newDocs(src []byte) (*docs, error) {
	d, err := loadDoc(src)
	if err != nil {
		return nil, err
	}
	t, err := template.New("docs").Funcs(template.FuncMap{"pre": preText}).Parse(docsTemplate)
	if err != nil {
		return nil, fmt.Errorf("rest: docs template: %w", err)
	}
	page := buildDocsPage(d)
	page.Style = template.CSS(docsCSS)
	var b bytes.Buffer
	if err := t.Execute(&b, page); err != nil {
		return nil, fmt.Errorf("rest: render docs: %w", err)
	}
	// The page's one style sheet is allowed by its hash; nothing else may
	// load, run or frame it.
	sum := sha256.Sum256([]byte(docsCSS))
	csp := "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	_, _ = w.Write(b.Bytes())
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("rest: compress docs: %w", err)
	}
	return &docs{page: b.Bytes(), gz: gz.Bytes(), csp: csp}, nil
}

// preText escapes text for a <pre> element. It leaves quotes alone, which
// only attributes need escaped: the JSON examples are full of them, and
// html/template writes each as &#34;, five bytes for one.
func preText(s string) template.HTML {
	return template.HTML(strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s))
}

// Docs serves the API reference.
func (h *Handler) Docs(c *fiber.Ctx) error {
	d, err := h.docs()
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set(fiber.HeaderContentSecurityPolicy, d.csp)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	c.Set(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
	// fiber offers the first encoding to a request that names none.
	if c.Get(fiber.HeaderAcceptEncoding) != "" && c.AcceptsEncodings("gzip") == "gzip" {
		c.Set(fiber.HeaderContentEncoding, "gzip")
		return c.Send(d.gz)
	}
	return c.Send(d.page)
}
