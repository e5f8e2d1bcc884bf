package mcp

import (
	"bytes"
	"encoding/json"
	"mime"

	"github.com/gofiber/fiber/v2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// malformed checks a JSON body before the SDK reads it, and returns the
// JSON-RPC error for one that is not JSON (parse error) or holds a
// message without a method. The SDK would take such a message for the
// client's answer to a request of the server's and accept it with 202,
// but a stateless server never asks the client anything. Any other body
// is left to the SDK.
func malformed(c *fiber.Ctx) *jsonrpc.Error {
	if c.Method() != fiber.MethodPost {
		return nil
	}
	if ct, _, _ := mime.ParseMediaType(c.Get(fiber.HeaderContentType)); ct != fiber.MIMEApplicationJSON {
		return nil
	}
	body := bytes.TrimSpace(c.Body())
	if !json.Valid(body) {
		return &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "The body is not JSON."}
	}
	msgs := []json.RawMessage{body}
	if body[0] == '[' {
		if err := json.Unmarshal(body, &msgs); err != nil || len(msgs) == 0 {
			return invalidRequest
		}
	}
	for _, raw := range msgs {
		var m struct {
			Method *string `json:"method"`
		}
		if json.Unmarshal(raw, &m) != nil || m.Method == nil || *m.Method == "" {
			return invalidRequest
		}
	}
	return nil
}

var invalidRequest = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
	Message: "Each message must be a JSON-RPC request or notification, with a method."}

// refuseRPC answers a JSON-RPC error of no request (id null).
func refuseRPC(c *fiber.Ctx, status int, e *jsonrpc.Error) error {
	out, err := json.Marshal(rpcError{JSONRPC: "2.0", Error: e})
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Status(status).Send(out)
}
