package api

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"coffer/api/httperr"
)

// TestInTurn: past its n requests at once a request waits for a turn, and
// one whose deadline passes while it waits is a 503 without having run;
// the health checks and the static files never wait.
func TestInTurn(t *testing.T) {
	app := fiber.New(fiber.Config{ErrorHandler: func(c *fiber.Ctx, err error) error {
		status, resp := httperr.Classify(err)
		return c.Status(status).JSON(resp)
	}})
	app.Use(deadline(100*time.Millisecond), inTurn(1))
	held, release := make(chan struct{}), make(chan struct{})
	ran := 0
	app.Get("/hold", func(c *fiber.Ctx) error {
		close(held)
		<-release
		return c.SendString("done")
	})
	app.Get("/next", func(c *fiber.Ctx) error { ran++; return c.SendString("ran") })
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.SendString("ok") })
	app.Get("/static/:name", func(c *fiber.Ctx) error { return c.SendString("file") })

	first := make(chan int)
	go func() {
		resp, err := app.Test(httptest.NewRequest("GET", "/hold", nil), -1)
		if err != nil {
			first <- 0
			return
		}
		first <- resp.StatusCode
	}()
	<-held
	if resp, err := app.Test(httptest.NewRequest("GET", "/next", nil), -1); err != nil || resp.StatusCode != 503 || ran != 0 {
		t.Fatalf("a request past the turns: %v %v, ran %d; want a 503 that did not run", resp, err, ran)
	}
	for _, path := range []string{"/healthz", "/static/app.js"} {
		if resp, err := app.Test(httptest.NewRequest("GET", path, nil), -1); err != nil || resp.StatusCode != 200 {
			t.Errorf("%s waited: %v %v", path, resp, err)
		}
	}
	close(release)
	if status := <-first; status != 200 {
		t.Fatalf("the held request: %d", status)
	}
	if resp, err := app.Test(httptest.NewRequest("GET", "/next", nil), -1); err != nil || resp.StatusCode != 200 || ran != 1 {
		t.Fatalf("its turn: %v %v, ran %d", resp, err, ran)
	}
}
