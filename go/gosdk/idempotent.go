package gosdk

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	toolctx "github.com/toolctx/toolctx/go"
)

// Idempotent runs a go-sdk tool at most once per verified idempotency key
// (CONTRACT §5.1): a platform retry gets the first result back (marked
// replayed), the same key with other arguments a conflict refusal, a call
// without a verified context an unverified refusal; every rule is the
// core's (toolctx.Idempotency). An error result is not kept: a retry runs
// the tool again. With a typed Out the SDK writes Out over the result's
// structured content, so a refusal result carries Out's zero value there
// too: Out any keeps the core's refusal as it is.
func Idempotent[In, Out any](idem *toolctx.Idempotency, h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		var zero Out
		c, err := FromRequest(req)
		if err != nil {
			res, err := result(idem.Refusal("unverified", ""))
			return res, zero, err
		}
		var args []byte
		if req.Params != nil {
			args = req.Params.Arguments
		}
		var out Out
		var ran bool
		text, err := idem.Run(ctx, c.IdempotencyKey, revision(req), args, func(ctx context.Context) ([]byte, bool, error) {
			res, o, err := h(ctx, req, in)
			if err != nil {
				return nil, false, err
			}
			ran, out = true, o
			if res == nil {
				res = &mcp.CallToolResult{}
				if b, err := json.Marshal(o); err == nil && string(b) != "null" {
					res.StructuredContent = json.RawMessage(b)
					res.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
				}
			}
			b, err := json.Marshal(res)
			return b, err == nil && !res.IsError, err
		})
		if err != nil {
			return nil, zero, err
		}
		res, err := result(text, nil)
		if err == nil && !ran && res.StructuredContent != nil {
			// The SDK writes a typed Out over StructuredContent: hand the
			// stored one back as Out.
			if b, merr := json.Marshal(res.StructuredContent); merr == nil {
				_ = json.Unmarshal(b, &out)
			}
		}
		return res, out, err
	}
}

// revision is the call's protocol revision as go-sdk reads it (the
// session's initialize parameters, which a stateless 2026-07-28 request
// carries too), or "" when it has none: the core writes a replay for it.
func revision(req *mcp.CallToolRequest) string {
	if req == nil || req.Session == nil {
		return ""
	}
	if p := req.Session.InitializeParams(); p != nil {
		return p.ProtocolVersion
	}
	return ""
}

// result reads a CallToolResult's JSON (the core's refusal, a stored one).
func result(text []byte, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		return nil, err
	}
	res := new(mcp.CallToolResult)
	if err := json.Unmarshal(text, res); err != nil {
		return nil, err
	}
	return res, nil
}
