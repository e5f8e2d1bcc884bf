package apitest

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
)

// UploadFile posts a multipart form with the CSRF token of the last page,
// the fields and a file, with the browser's cookies.
func (b *Browser) UploadFile(path string, fields map[string]string, filename string, file []byte) Response {
	b.T.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("csrf_token", b.CSRF)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	fw, _ := w.CreateFormFile("file", filename)
	_, _ = fw.Write(file)
	_ = w.Close()
	req := httptest.NewRequest("POST", path, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("X-Forwarded-For", b.IP)
	for k, v := range b.Cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := b.E.App.Test(req, -1)
	if err != nil {
		b.T.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == 500 {
		b.T.Fatalf("POST %s: 500 %s", path, out)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: out}
}
