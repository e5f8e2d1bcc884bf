package apitest

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
)

// Upload sends a multipart form with a file part "file" and the fields,
// and checks the response against the OpenAPI document.
func (e *Env) Upload(path, key, filename string, file []byte, fields map[string]string) Response {
	e.T.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	if file != nil {
		fw, err := w.CreateFormFile("file", filename)
		if err != nil {
			e.T.Fatal(err)
		}
		_, _ = fw.Write(file)
	}
	_ = w.Close()
	req := httptest.NewRequest("POST", path, bytes.NewReader(body.Bytes()))
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("X-Api-Key", key)
	resp, err := e.App.Test(req, -1)
	if err != nil {
		e.T.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	r := Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
	NoLeak(e.T, r)
	e.Validate(req, r)
	return r
}

// FinishImport runs the import's job steps (the worker's part) to the end.
func (e *Env) FinishImport(t *testing.T, familyID, id string) {
	t.Helper()
	fam, imp := uuid.MustParse(familyID), uuid.MustParse(id)
	for range 100 {
		_, done, err := e.Store.ImportStep(context.Background(), fam, imp, nil)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			return
		}
	}
	t.Fatal("import never finished")
}
