package api

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gofiber/fiber/v2"
)

// OpenAPIYAML is the machine-readable description of /api/v1. The test
// suite validates every response against it.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte

//go:embed docs.html
var docsHTML []byte

// openAPIJSON renders the document as JSON once, at start, and checks it.
func loadOpenAPI() ([]byte, error) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("api: load openapi.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("api: openapi.yaml is invalid: %w", err)
	}
	return json.Marshal(doc)
}

func (h *Handler) openAPIJSON(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Send(h.openAPI)
}

func (h *Handler) openAPIYAML(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, "application/yaml; charset=utf-8")
	return c.Send(OpenAPIYAML)
}

// apiDocs serves a page that renders the document for people, with no
// script from elsewhere.
func (h *Handler) apiDocs(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'")
	return c.Send(docsHTML)
}
