package mcp

import (
	"bytes"
	"encoding/json"
	"mime"

	"github.com/gofiber/fiber/v2"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// malformed checks a JSON body before the SDK reads it, and returns the
// JSON-RPC error for one that is not JSON (parse error), a batch, or a
// message without a method. The SDK would take such a message for the
// client's answer to a request of the server's and accept it with 202,
// but a stateless server never asks the client anything. A batch (which
// MCP dropped in its 2025-06-18 revision) is refused whole: the SDK ran
// its first call and dropped the rest without a word. Any other body is
// left to the SDK.
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
	if body[0] == '[' {
		return batchRefused
	}
	var m struct {
		Method *string `json:"method"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method == nil || *m.Method == "" {
		return invalidRequest
	}
	return nil
}

var batchRefused = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
	Message: "Batches are not accepted: send one JSON-RPC message per request. Nothing in this batch was run."}

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
