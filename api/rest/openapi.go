package rest

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"
)

// OpenAPIYAML is the machine-readable description of /api/v1, the source
// that people edit. The test suite validates every response against it.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte

// OpenAPIJSON is the same document as JSON, generated from OpenAPIYAML by
// `go test ./api/rest -run TestOpenAPIJSON -update-openapi` and checked to match
// it by the same test, so the server needs no YAML or OpenAPI library.
//
//go:embed openapi.json
var OpenAPIJSON []byte

//go:embed docs.html
var docsHTML []byte

func (h *Handler) openAPIJSON(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Send(OpenAPIJSON)
}

func (h *Handler) openAPIYAML(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, "application/yaml; charset=utf-8")
	return c.Send(OpenAPIYAML)
}

// Docs serves a page that renders the document for people, with no
// script from elsewhere.
func (h *Handler) Docs(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'")
	return c.Send(docsHTML)
}
