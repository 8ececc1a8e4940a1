package toolctxtest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/toolctx/toolctx/go/toolctxtest"
)

// A test's MCP client sends through a Platform: each tools/call carries
// the token of the call it mints, with the matching _meta in the body.
func ExamplePlatform() {
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		fmt.Println("token sent:", r.Header.Get(toolctxtest.Header) != "")
	}))
	defer srv.Close()

	p := &toolctxtest.Platform{}
	client := &http.Client{Transport: p} // e.g. an mcp.StreamableClientTransport's HTTPClient
	call := toolctxtest.NewCall("srv-1", "task-7", "get_order", time.Now())
	p.SetToken(call.Token("a-secret-of-at-least-32-bytes-0123"))
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		string(call.Body(2, "get_order", map[string]any{"orderId": "A-1"})),
	} {
		res, err := client.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		_ = res.Body.Close()
	}
	// Output:
	// token sent: false
	// token sent: true
}
