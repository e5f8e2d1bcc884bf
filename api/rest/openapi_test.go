package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"coffer/api/rest"
)

var updateOpenAPI = flag.Bool("update-openapi", false, "rewrite api/rest/openapi.json from api/rest/openapi.yaml")

// TestOpenAPIJSON checks that the YAML document is valid OpenAPI 3 and that
// the JSON the server embeds is the same document.
func TestOpenAPIJSON(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(rest.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is not valid OpenAPI 3: %v", err)
	}
	if doc.Info.Version != "v1" {
		t.Errorf("info.version = %q, want v1", doc.Info.Version)
	}
	want, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *updateOpenAPI {
		if err := os.WriteFile("openapi.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(rest.OpenAPIJSON, want) {
		t.Fatal("api/rest/openapi.json is stale: run go test ./api/rest -run TestOpenAPIJSON -update-openapi")
	}
}
