package mcp

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"coffer/jobs/assistant"
)

// msgInternal is the JSON-RPC error of a failure of the service itself;
// the real error is logged, never sent.
const msgInternal = "The service could not run the tool; try again later."

// call runs the table's tool name for the request's caller. A refusal of
// the tool (an unknown id, an argument of the wrong type) is a tool
// error, isError with the refusal's JSON, which the model reads and may
// act on; only a failure of the service is a JSON-RPC error.
func (h *Handler) call(name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		c, ok := ctx.Value(callerKey{}).(assistant.Caller)
		if !ok {
			h.log.Error("mcp: a tool call without a caller", slog.String("tool", name))
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msgInternal}
		}
		var args string
		if req.Params != nil {
			args = string(req.Params.Arguments)
		}
		if args == "null" {
			args = ""
		}
		out, refused, err := assistant.CallTool(ctx, h.store, c, name, args)
		if err != nil {
			h.log.Error("mcp: tool failed", slog.String("tool", name), slog.String("family_id", c.FamilyID.String()),
				slog.Any("error", err))
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msgInternal}
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(out)}}, IsError: refused}, nil
	}
}
