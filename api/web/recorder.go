package web

import (
	"bytes"
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// Recorder is the http.ResponseWriter given to a net/http handler that a
// fiber handler runs (fosite, the MCP SDK): it keeps what the handler
// wrote, for the fiber handler to look at and send. Nothing is streamed,
// so Flush has nothing to do.
type Recorder struct {
	header http.Header
	Status int
	Body   bytes.Buffer
}

// NewRecorder returns an empty Recorder with status 200.
func NewRecorder() *Recorder { return &Recorder{header: http.Header{}, Status: http.StatusOK} }

// Header returns the headers written.
func (r *Recorder) Header() http.Header { return r.header }

// Write adds p to the body.
func (r *Recorder) Write(p []byte) (int, error) { return r.Body.Write(p) }

// WriteHeader records the status.
func (r *Recorder) WriteHeader(status int) { r.Status = status }

// Flush does nothing: the body is sent whole.
func (r *Recorder) Flush() {}

// CopyHeaders sets the recorded headers on c's response.
func (r *Recorder) CopyHeaders(c *fiber.Ctx) {
	for k, vs := range r.header {
		for _, v := range vs {
			c.Set(k, v)
		}
	}
}
