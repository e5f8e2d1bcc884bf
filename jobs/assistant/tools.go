package assistant

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"coffer/models"
)

// Caller is who a tool acts for: the chat's owner, with their family and
// role, and whether they let the assistant change their data. The family
// comes from the chat (or, for MCP, the token), never from the arguments.
type Caller struct {
	FamilyID uuid.UUID
	UserID   uuid.UUID
	Role     string
	MayWrite bool
}

// Tool is one function the model may call. The chat reply and the MCP
// server offer the same table (Tools), so a tool is written once.
type Tool struct {
	Name        string
	Description string
	// Schema is the JSON Schema of the arguments object.
	Schema map[string]any
	// Write marks a tool that changes data: offered only to a caller who
	// allowed it (Caller.MayWrite).
	Write bool
	// Run does the work and returns a value that marshals to the JSON
	// result. Money in results is a decimal string as the API shows it. An
	// *Error is a refusal the model can act on; any other error ends the
	// reply.
	Run func(ctx context.Context, s *models.Store, c Caller, args json.RawMessage) (any, error)
	// Propose, on a write tool, checks the arguments as Run does and
	// describes the change without making it: the chat's reply proposes
	// and the person confirms (Confirm runs Run). The MCP server, whose
	// client is the person's own agent with its own confirmation, runs
	// Run directly.
	Propose func(ctx context.Context, s *models.Store, c Caller, args json.RawMessage) (*Plan, error)
}

// Error is a tool's refusal of its input (an unknown id, a bad date): the
// model gets it as the result and may try again.
type Error struct {
	Code    string `json:"error"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return "assistant: tool refused: " + e.Code + ": " + e.Message }

func refuse(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Tools is the whole table, read tools first.
func Tools() []Tool {
	return []Tool{
		getAccounts, getTransactions, getBalanceSheet, getIncomeStatement, getCategories, getMerchants, getTags,
		getForecast, getUpcomingBills,
		updateTransaction, createCategory, createTag,
	}
}

// Offered is the tools c may use: the read tools, and the write tools when
// c allowed them.
func Offered(c Caller) []Tool {
	var out []Tool
	for _, t := range Tools() {
		if !t.Write || c.MayWrite {
			out = append(out, t)
		}
	}
	return out
}

// Call runs tool name for c with the raw JSON arguments and returns the
// JSON result. A tool that is not offered to c, arguments that are not a
// JSON object of the right types and a tool's refusal all come back as a
// result the model reads ({"error": …, "message": …}), not as an error:
// the error is only for a failure of the service itself.
func Call(ctx context.Context, s *models.Store, c Caller, name string, args string) (json.RawMessage, error) {
	out, _, err := CallTool(ctx, s, c, name, args)
	return out, err
}

// CallTool is Call that also reports whether the result is a refusal,
// which the MCP server marks as a tool error (isError).
func CallTool(ctx context.Context, s *models.Store, c Caller, name string, args string) (out json.RawMessage, refused bool, err error) {
	return dispatch(ctx, c, name, args, func(t *Tool, raw json.RawMessage) (any, error) { return t.Run(ctx, s, c, raw) })
}

// dispatch finds tool name among those offered to c, checks that args is
// a JSON object, runs it with run, and turns refusals into the result the
// model reads.
func dispatch(ctx context.Context, c Caller, name string, args string, run func(*Tool, json.RawMessage) (any, error)) (out json.RawMessage, refused bool, err error) {
	var tool *Tool
	for _, t := range Offered(c) {
		if t.Name == name {
			tool = &t
			break
		}
	}
	var res any
	switch raw := strings.TrimSpace(args); {
	case tool == nil:
		err = refuse("unknown_tool", "There is no tool named %q; use only the tools listed.", truncate(name, 64))
	case raw == "":
		res, err = run(tool, json.RawMessage("{}"))
	case !json.Valid([]byte(raw)) || raw[0] != '{':
		err = refuse("invalid_arguments", "The arguments must be a JSON object.")
	default:
		res, err = run(tool, json.RawMessage(raw))
	}
	var te *Error
	switch {
	case errors.As(err, &te):
		res = te
	case errors.Is(err, models.ErrNotFound):
		res = refuse("not_found", "No such record in this household.")
	case err != nil:
		var inv *models.InvalidError
		if errors.As(err, &inv) {
			res = refuse("validation_failed", "%s", strings.Join(inv.Problems, "; "))
		} else if errors.Is(err, models.ErrConflict) {
			res = refuse("conflict", "A record with that name already exists.")
		} else {
			return nil, false, err
		}
	}
	if out, err = json.Marshal(res); err != nil {
		return nil, false, fmt.Errorf("assistant: %s: result: %w", name, err)
	}
	_, refused = res.(*Error)
	return out, refused, nil
}

// decode reads a tool's arguments into v; a value of the wrong type is a
// refusal that names the argument.
func decode(args json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return refuse("invalid_arguments", "Argument %q must be a %s.", te.Field, te.Type.String())
		}
		return refuse("invalid_arguments", "The arguments do not match the tool's schema.")
	}
	return nil
}

// parseID reads an id argument; anything but a UUID is not found, like an
// id of another family.
func parseID(what, s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, refuse("not_found", "%s %q was not found; use an id from the tools' results.", what, truncate(s, 64))
	}
	return id, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// object is the JSON Schema of an arguments object.
func object(required []string, props map[string]any) map[string]any {
	if required == nil {
		required = []string{}
	}
	return map[string]any{"type": "object", "properties": props, "required": required}
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

func strList(desc string) map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": desc}
}
