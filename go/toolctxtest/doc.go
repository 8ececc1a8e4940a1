// Package toolctxtest plays the MCP client platform in a server's tests:
// it mints context tokens and the matching _meta for a tools/call, and
// Platform, an http.RoundTripper for an MCP client, puts the token on
// each tools/call request as the platform does.
//
// It uses the standard library only, never toolctx itself, so a test that
// mints here checks toolctx independently (as tests/support/checks.py
// does for the project's own suites).
package toolctxtest
